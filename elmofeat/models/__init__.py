"""The pretrained models elmofeat ships (one folder each) and how they were made.

A folder holds ``bilm.pt`` (16-bit weights), ``config.json`` and ``README.md`` (the
model card); :func:`elmofeat.BiLM.from_pretrained` loads one by name through the
registry of :mod:`elmofeat.bilm.hub`. :mod:`elmofeat.models.recipes` holds each
model's corpus and configuration. Nothing here imports torch, so the command line
can list the recipes without loading it.
"""
