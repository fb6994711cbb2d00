import hashlib
import http.server
import os
import re
import threading
from pathlib import Path

import numpy as np
import pytest

from elmofeat.datasets import (
    ChecksumError,
    RemoteFile,
    clean_ag_news_text,
    fetch_file,
    get_data_home,
    load_ag_news,
    load_cr,
    load_mpqa,
    load_r8,
)
from elmofeat.datasets import _ag_news, _polarity, _r8

# --------------------------------------------------------------------- real data


def test_ag_news_test_partition_from_the_data_home(data_home):
    with pytest.warns(UserWarning, match="train partition is missing"):
        news = load_ag_news(data_home)
    assert len(news.data) == 7600
    assert np.bincount(news.target).tolist() == [1900] * 4
    assert news.target_names == ["World", "Sports", "Business", "Sci/Tech"]
    assert set(news.partition) == {"test"}
    assert all(isinstance(d, str) and d for d in news.data)
    joined = "\n".join(news.data)
    assert not re.search(r" #\d+;| quot;| amp;|\\", joined)
    assert "$10 million Ansari X Prize" in news.data[1]
    # title + " " + description
    assert news.data[0].startswith("Fears for T N pension after talks Unions representing")


def test_ag_news_subsets(data_home):
    test = load_ag_news(data_home, subset="test")
    assert len(test.data) == 7600
    with pytest.raises(FileNotFoundError) as info:
        load_ag_news(data_home, subset="train")
    message = str(info.value)
    assert str(Path(data_home) / "ag_news" / "train.csv") in message
    assert str(Path(data_home) / "ag_news_csv" / "train.csv") in message
    assert "download_if_missing=True" in message
    with pytest.raises(ValueError, match="subset"):
        load_ag_news(data_home, subset="validation")


def test_r8_standard_split(data_home):
    train, test = load_r8(data_home), load_r8(data_home, subset="test")
    assert (len(train.data), len(test.data)) == (5485, 2189)
    assert train.target_names == test.target_names
    assert train.target_names == sorted(train.target_names) and len(train.target_names) == 8
    assert train.target_names[np.bincount(train.target).argmax()] == "earn"
    both = load_r8(data_home, subset="all")
    assert len(both.data) == 7674 and both.data[:5] == train.data[:5]


def test_cr_and_mpqa_have_the_standard_row_counts(data_home):
    cr, mpqa = load_cr(data_home), load_mpqa(data_home)
    assert (len(cr.data), np.bincount(cr.target).tolist()) == (3775, [1368, 2407])
    assert (len(mpqa.data), np.bincount(mpqa.target).tolist()) == (10606, [7294, 3312])
    for bunch in (cr, mpqa):
        assert bunch.target_names == ["negative", "positive"]
        assert all(isinstance(d, str) for d in bunch.data)
        assert "10-fold" in bunch.DESCR
    # Positives first, in file order; a few blank lines are kept as empty documents.
    assert cr.data[2] == "it practically plays almost everything you give it ."
    assert cr.target[0] == 1 and cr.target[-1] == 0
    assert 0 < sum(d == "" for d in cr.data) < 10
    assert np.mean([len(d.split()) for d in mpqa.data]) < 4


def test_polarity_loaders_missing_and_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        load_cr(tmp_path)
    assert str(tmp_path / "cr" / "custrev.pos") in str(info.value)
    assert "load_cr(download_if_missing=True)" in str(info.value)
    (tmp_path / "mpqa").mkdir()
    (tmp_path / "mpqa" / "mpqa.pos").write_bytes(b"good\r\nfine\n")
    (tmp_path / "mpqa" / "mpqa.neg").write_bytes(b"bad \xff\n")
    with pytest.raises(ValueError, match=r"mpqa\.neg is not UTF-8"):
        load_mpqa(tmp_path)
    (tmp_path / "mpqa" / "mpqa.neg").write_bytes(b"bad\n\nawful")  # no final newline
    mpqa = load_mpqa(tmp_path)
    assert mpqa.data == ["good", "fine", "bad", "", "awful"]
    assert mpqa.target.tolist() == [1, 1, 0, 0, 0]


def test_data_home_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("ELMOFEAT_DATA", str(tmp_path / "env"))
    assert get_data_home() == tmp_path / "env"
    assert get_data_home(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("ELMOFEAT_DATA")
    assert get_data_home() == Path("~/elmofeat_data").expanduser()


def test_missing_data_error_names_every_path(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        load_ag_news(tmp_path)
    for part in ("train", "test"):
        for folder in ("ag_news", "ag_news_csv"):
            assert str(tmp_path / folder / f"{part}.csv") in str(info.value)
    with pytest.raises(FileNotFoundError, match="r8-test-all-terms.txt"):
        load_r8(tmp_path, subset="test")


def test_clean_ag_news_text():
    raw = 'A\\second  #36;5 deal,  quot;big quot; for AT amp;T \\\\ said \\$3 &lt;IBM.N&gt;'
    assert clean_ag_news_text(raw) == 'A second $5 deal, "big" for AT&T said $3 <IBM.N>'
    assert clean_ag_news_text("it #39;s  #151; fine") == "it's — fine"


def test_ag_news_reads_classes_file_and_rejects_bad_labels(tmp_path):
    folder = tmp_path / "ag_news_csv"
    folder.mkdir()
    (folder / "test.csv").write_text('"2","T1","D1"\n"4","T2","D \\\\ 2"\n')
    (folder / "classes.txt").write_text("W\nS\nB\nT\n")
    with pytest.warns(UserWarning):
        bunch = load_ag_news(tmp_path)
    assert bunch.data == ["T1 D1", "T2 D 2"] and bunch.target.tolist() == [1, 3]
    assert bunch.target_names == ["W", "S", "B", "T"]
    (folder / "test.csv").write_text('"9","T1","D1"\n')
    with pytest.raises(ValueError, match="expected 1..4"):
        load_ag_news(tmp_path, subset="test")


@pytest.mark.parametrize("content, message", [
    (b'"1.5","T","D"\n', r"row 0 has class '1.5', expected 1..4"),  # was read as class 0
    (b'"1","T","D"\n"2.0","T","D"\n', r"row 1 has class '2.0'"),
    (b'"1","T","D"\n"2","T","D","extra","fields"\n', r"test.csv is not an AG News CSV file"),
    (b'"1","T","\xff\xfe D"\n', r"test.csv is not UTF-8 text"),
    (b"", r"test.csv is not an AG News CSV file"),
])
def test_malformed_ag_news_files_are_named_in_the_error(tmp_path, content, message):
    folder = tmp_path / "ag_news"
    folder.mkdir()
    (folder / "test.csv").write_bytes(content)
    with pytest.raises(ValueError, match=message):
        load_ag_news(tmp_path, subset="test")


# ---------------------------------------------------- downloads against 127.0.0.1


class _Handler(http.server.BaseHTTPRequestHandler):
    files: dict = {}
    hits: dict = {}
    ranges: list = []  # the Range header of every request ("" without one)

    def do_GET(self):
        self.hits[self.path] = self.hits.get(self.path, 0) + 1
        self.ranges.append(self.headers.get("Range", ""))
        body = self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        if self.path.endswith("truncated") or (self.path.endswith("cut-once")
                                               and self.hits[self.path] == 1):
            # Promise the whole file, send its first part, then hang up mid-download.
            self.send_response(200)
            self.send_header("Content-Length", str(len(body) * (2 if self.path.endswith(
                "truncated") else 1)))
            self.end_headers()
            self.wfile.write(body if self.path.endswith("truncated") else body[:len(body) // 3])
            self.wfile.flush()
            self.connection.close()
            return
        asked = self.headers.get("Range", "")
        if asked.startswith("bytes=") and asked.endswith("-") and self.path.endswith("cut-once"):
            start = int(asked[len("bytes="):-1])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            self.send_header("Content-Length", str(len(body) - start))
            self.end_headers()
            self.wfile.write(body[start:])
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Handler.files, _Handler.hits, _Handler.ranges = {}, {}, []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", _Handler
    httpd.shutdown()
    httpd.server_close()


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def test_fetch_file_verifies_and_writes_atomically(server, tmp_path):
    url, handler = server
    handler.files["/f.txt"] = b"hello\n" * 1000
    remote = RemoteFile("f.txt", url + "/f.txt", _sha256(handler.files["/f.txt"]))
    path = fetch_file(remote, tmp_path / "sub")
    assert path.read_bytes() == handler.files["/f.txt"]
    assert os.listdir(tmp_path / "sub") == ["f.txt"]
    md5 = RemoteFile("g.txt", url + "/f.txt", "md5:" + hashlib.md5(b"hello\n" * 1000).hexdigest())
    assert fetch_file(md5, tmp_path).read_bytes() == handler.files["/f.txt"]


def test_checksum_mismatch_keeps_no_file_and_previous_file_intact(server, tmp_path):
    url, handler = server
    handler.files["/f.txt"] = b"tampered"
    (tmp_path / "f.txt").write_bytes(b"good old copy")
    remote = RemoteFile("f.txt", url + "/f.txt", _sha256(b"expected"))
    with pytest.raises(ChecksumError, match="expected"):
        fetch_file(remote, tmp_path)
    assert os.listdir(tmp_path) == ["f.txt"]
    assert (tmp_path / "f.txt").read_bytes() == b"good old copy"


def test_an_interrupted_download_keeps_no_file_under_its_name_and_resumes(server, tmp_path):
    """A transfer cut off midway never leaves bytes under the final name; its bytes wait
    in a hidden partial file, and the next call asks only for the rest (it used to start
    again from zero, which on a slow line never finishes a large file)."""
    url, handler = server
    handler.files["/truncated"] = b"x" * 5000
    remote = RemoteFile("t.bin", url + "/truncated", _sha256(b"x" * 10000))
    with pytest.raises(OSError, match="bytes are kept in .*the next call resumes"):
        fetch_file(remote, tmp_path, n_retries=1, delay=0)
    assert os.listdir(tmp_path) == [".t.bin.part"]
    assert handler.hits["/truncated"] == 2  # retried once

    body = bytes(range(256)) * 40
    handler.files["/cut-once"] = body
    remote = RemoteFile("c.bin", url + "/cut-once", _sha256(body))
    handler.ranges.clear()
    assert fetch_file(remote, tmp_path, n_retries=1, delay=0).read_bytes() == body
    assert handler.ranges == ["", f"bytes={len(body) // 3}-"]
    assert sorted(os.listdir(tmp_path)) == [".t.bin.part", "c.bin"]


def test_a_resumed_download_that_fails_its_checksum_is_discarded(server, tmp_path):
    url, handler = server
    handler.files["/f.txt"] = b"the whole file"
    (tmp_path / ".f.txt.part").write_bytes(b"stale bytes of another file")
    with pytest.raises(ChecksumError, match="discarded"):
        fetch_file(RemoteFile("f.txt", url + "/f.txt", _sha256(b"expected")), tmp_path)
    assert os.listdir(tmp_path) == []
    # a server that ignores the range sends the whole file, which replaces the partial bytes
    (tmp_path / ".f.txt.part").write_bytes(b"stale")
    good = RemoteFile("f.txt", url + "/f.txt", _sha256(b"the whole file"))
    assert fetch_file(good, tmp_path).read_bytes() == b"the whole file"


def test_http_error_is_retried_then_reported(server, tmp_path):
    url, handler = server
    remote = RemoteFile("nope", url + "/nope", _sha256(b""))
    with pytest.raises(OSError, match="after 3 attempts"):
        fetch_file(remote, tmp_path, n_retries=2, delay=0)
    assert handler.hits["/nope"] == 3 and os.listdir(tmp_path) == []


def test_bad_checksum_spec_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="checksum must be"):
        fetch_file(RemoteFile("a", "http://127.0.0.1:9/a", "crc32:00"), tmp_path)


def test_loaders_download_missing_files(server, tmp_path, monkeypatch):
    url, handler = server
    ag_test = b'"3","Stocks  #36;5 up","Markets  quot;rally quot;"\n"1","War","Peace\\\\talks"\n'
    r8_train = b"earn\tprofit up\nacq\tcompany buys firm\n"
    r8_test = b"earn\tloss\n"
    handler.files.update({"/ag/test.csv": ag_test, "/r8/train": r8_train, "/r8/test": r8_test})
    monkeypatch.setitem(
        _ag_news.REMOTE_FILES, "test", RemoteFile("test.csv", url + "/ag/test.csv", _sha256(ag_test))
    )
    monkeypatch.setitem(
        _r8.REMOTE_FILES, "train", RemoteFile("r8-train-all-terms.txt", url + "/r8/train", _sha256(r8_train))
    )
    monkeypatch.setitem(
        _r8.REMOTE_FILES, "test", RemoteFile("r8-test-all-terms.txt", url + "/r8/test", _sha256(r8_test))
    )
    news = load_ag_news(tmp_path, subset="test", download_if_missing=True)
    assert news.data == ['Stocks $5 up Markets "rally"', "War Peace talks"]
    assert news.target.tolist() == [2, 0]
    assert (tmp_path / "ag_news" / "test.csv").read_bytes() == ag_test
    r8 = load_r8(tmp_path, subset="all", download_if_missing=True)
    assert r8.target_names == ["acq", "earn"] and r8.target.tolist() == [1, 0, 1]
    # Second call reads the local copies and does not download again.
    load_r8(tmp_path, subset="all", download_if_missing=True)
    assert handler.hits["/r8/train"] == 1


def _serve_cr(server, monkeypatch, files: dict) -> None:
    """CR's two files on the local server, with their checksums pinned."""
    url, handler = server
    handler.files.update(files)
    checksums = {side: _sha256(files[f"/custrev.{side}"]) for side in ("pos", "neg")}
    monkeypatch.setattr(_polarity, "_BASE_URL", url + "/")
    monkeypatch.setattr(_polarity, "CR", _polarity.PolaritySet("CR", "cr", "custrev", checksums, "CR."))


def test_polarity_loaders_download_missing_files(server, tmp_path, monkeypatch):
    url, handler = server
    files = {"/custrev.pos": b"great player !\n", "/custrev.neg": b"broke .\nno sound\n"}
    _serve_cr(server, monkeypatch, files)
    cr = load_cr(tmp_path, download_if_missing=True)
    assert cr.data == ["great player !", "broke .", "no sound"]
    assert cr.target.tolist() == [1, 0, 0]
    assert (tmp_path / "cr" / "custrev.neg").read_bytes() == files["/custrev.neg"]
    load_cr(tmp_path, download_if_missing=True)  # local copies now: no second download
    assert handler.hits["/custrev.pos"] == 1
    handler.files["/custrev.pos"] = b"tampered\n"
    (tmp_path / "cr" / "custrev.pos").unlink()
    with pytest.raises(ChecksumError):
        load_cr(tmp_path, download_if_missing=True)
    assert not (tmp_path / "cr" / "custrev.pos").exists()


def test_a_connection_that_never_answers_fails_soon_and_says_what_it_fetched(tmp_path, capsys):
    """A server that accepts the connection and then says nothing: the download gives
    up after its per-wait timeout and retries (not minutes), naming file and address,
    and said before connecting what it was fetching."""
    import socket
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # connections are accepted by the kernel and never answered
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/test.csv"
    try:
        start = time.monotonic()
        with pytest.raises(OSError, match=r"could not download test.csv from http://127.0.0.1:\d+/"
                                          r"test.csv after 2 attempts: .*timed out"):
            fetch_file(RemoteFile("test.csv", url, _sha256(b"x")), tmp_path, n_retries=1,
                       delay=0, timeout=0.5, progress=True)
        assert time.monotonic() - start < 5
    finally:
        listener.close()
    notice = capsys.readouterr().err
    assert f"fetching test.csv from {url}" in notice and "gives up after 2 attempts" in notice
    assert os.listdir(tmp_path) == []


def test_20newsgroups_bydate_split(data_home):
    from elmofeat.datasets import load_20newsgroups

    test = load_20newsgroups(data_home, subset="test")
    assert len(test.data) == 7532 and len(test.target_names) == 20
    assert test.target_names == sorted(test.target_names)
    assert "comp.graphics" in test.target_names and set(test.partition) == {"test"}
    assert all(isinstance(t, str) for t in test.data) and "Subject:" in test.data[0]
    assert np.bincount(test.target).min() > 200  # every group is there


def test_20newsgroups_missing_and_damaged_files(tmp_path):
    import lzma

    from elmofeat.datasets import load_20newsgroups

    with pytest.raises(FileNotFoundError, match="20 Newsgroups not found"):
        load_20newsgroups(tmp_path)
    with pytest.raises(ValueError, match="subset must be"):
        load_20newsgroups(tmp_path, subset="dev")
    folder = tmp_path / "20ng"
    folder.mkdir()
    with lzma.open(folder / "20news-bydate-train.jsonl.xz", "wt") as f:
        f.write('{"label": "sci.space", "text": "orbit"}\n{"label": 3}\n')
    with pytest.raises(ValueError, match=r"train.jsonl.xz:2: expected an object"):
        load_20newsgroups(tmp_path)
    (folder / "20news-bydate-train.jsonl.xz").write_bytes(b"not xz")
    with pytest.raises(ValueError, match="not an intact xz-compressed JSON Lines file"):
        load_20newsgroups(tmp_path)
    # A partial file (the sixth probe's D12): another count, other groups.
    with lzma.open(folder / "20news-bydate-train.jsonl.xz", "wt") as f:
        f.write('{"label": "sci.space", "text": "orbit"}\n{"label": "rec.autos", "text": "car"}\n')
    with pytest.raises(ValueError, match="holds 2 posts in 2 groups.*damaged or partial"):
        load_20newsgroups(tmp_path)
    with lzma.open(folder / "20news-bydate-train.jsonl.xz", "wt") as f:
        f.write('{"label": "my.group", "text": "orbit"}\n')
    with pytest.raises(ValueError, match="groups the bydate split does not"):
        load_20newsgroups(tmp_path)
    with lzma.open(folder / "20news-bydate-train.jsonl.xz", "wt") as f:  # an empty file
        pass
    with pytest.raises(ValueError, match="holds 0 posts"):
        load_20newsgroups(tmp_path)
    # A malformed record is named by the file's line (D17)
    with lzma.open(folder / "20news-bydate-train.jsonl.xz", "wt") as f:
        f.write('{"label": "sci.space", "text": "a"}\n\n{bad}\n')
    with pytest.raises(ValueError, match=r"train.jsonl.xz:3: not a JSON object"):
        load_20newsgroups(tmp_path)


# ------------------------------------------- elmofeat download: every dataset by name


def _bydate_archive(posts_per_part=None) -> bytes:
    """A 20news-bydate.tar.gz of the real layout and counts, with tiny posts."""
    import io
    import tarfile

    from elmofeat.datasets._newsgroups import GROUPS, POSTS

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for part, count in (posts_per_part or POSTS).items():
            for i in range(count):
                group = GROUPS[i % len(GROUPS)]
                body = f"From: x@y\nSubject: post {i} of {group}\n\ncaf\xe9 {i}\n".encode("latin-1")
                info = tarfile.TarInfo(f"20news-bydate-{part}/{group}/{100000 - i}")
                info.size = len(body)
                tar.addfile(info, io.BytesIO(body))
    return buffer.getvalue()


def test_20newsgroups_downloads_the_bydate_archive_and_writes_what_the_loader_reads(
        server, tmp_path, monkeypatch):
    from elmofeat.datasets import _newsgroups, load_20newsgroups

    url, handler = server
    handler.files["/20news-bydate.tar.gz"] = archive = _bydate_archive()
    monkeypatch.setattr(_newsgroups, "ARCHIVE", RemoteFile(
        "20news-bydate.tar.gz", url + "/20news-bydate.tar.gz", _sha256(archive)))
    with pytest.raises(FileNotFoundError, match="elmofeat download 20ng"):
        load_20newsgroups(tmp_path)
    news = load_20newsgroups(tmp_path, subset="all", download_if_missing=True)
    assert len(news.data) == 11_314 + 7_532 and len(news.target_names) == 20
    first = news.data[0]  # sorted by group, then file number, decoded as latin-1
    assert first.startswith("From: x@y") and "caf\xe9" in first
    assert news.target[0] == 0 and news.target_names[0] == "alt.atheism"
    assert sorted(os.listdir(tmp_path / "20ng")) == ["20news-bydate-test.jsonl.xz",
                                                     "20news-bydate-train.jsonl.xz"]
    load_20newsgroups(tmp_path, download_if_missing=True)
    assert handler.hits["/20news-bydate.tar.gz"] == 1  # read locally the second time


def test_a_partial_20newsgroups_archive_writes_no_file(server, tmp_path, monkeypatch):
    from elmofeat.datasets import _newsgroups, load_20newsgroups

    url, handler = server
    handler.files["/a.tar.gz"] = archive = _bydate_archive({"train": 40, "test": 20})
    monkeypatch.setattr(_newsgroups, "ARCHIVE", RemoteFile("a.tar.gz", url + "/a.tar.gz",
                                                           _sha256(archive)))
    with pytest.raises(ValueError, match="damaged or partial"):
        load_20newsgroups(tmp_path, download_if_missing=True)
    assert not (tmp_path / "20ng" / "20news-bydate-test.jsonl.xz").exists()


def test_glove_is_fetched_without_its_word2vec_header(server, tmp_path, monkeypatch):
    import gzip

    from elmofeat.datasets import _glove
    from elmofeat.wordvectors.io import load_word_vectors

    url, handler = server
    monkeypatch.setattr(_glove, "WORDS", 2)
    glove = "".join(f"{word} " + " ".join(str(i + k) for k in range(50)) + "\n"
                    for i, word in enumerate(["the", "cat"])).encode()
    handler.files["/g.gz"] = body = gzip.compress(b"2 50\n" + glove)
    monkeypatch.setitem(_glove.REMOTE_FILES, 50, RemoteFile("g.gz", url + "/g.gz", _sha256(body)))
    path = _glove.fetch_glove(50, tmp_path, progress=False)
    assert path == tmp_path / "glove" / "glove.6B.50d.txt.gz"
    assert gzip.decompress(path.read_bytes()) == glove
    assert os.listdir(tmp_path / "glove") == ["glove.6B.50d.txt.gz"]
    np.testing.assert_allclose(load_word_vectors(path, {"cat"})["cat"], np.arange(1, 51))
    handler.files["/h.gz"] = other = gzip.compress(b"5 3\nthe 0 0 0\n")
    monkeypatch.setitem(_glove.REMOTE_FILES, 100, RemoteFile("h.gz", url + "/h.gz", _sha256(other)))
    with pytest.raises(ValueError, match="does not start with the header '2 100'"):
        _glove.fetch_glove(100, tmp_path, progress=False)
    assert not (tmp_path / "glove" / "glove.6B.100d.txt.gz").exists()


def test_the_download_command_fetches_only_what_is_missing(server, tmp_path, monkeypatch, capsys):
    from elmofeat.cli import main
    from elmofeat.cli.download import MAIN_JOB, NAMES
    from elmofeat.datasets._downloads import DOWNLOADS, MAIN_JOB as LIBRARY_MAIN_JOB

    assert MAIN_JOB == LIBRARY_MAIN_JOB and list(NAMES) == list(DOWNLOADS)
    _, handler = server
    _serve_cr(server, monkeypatch, {"/custrev.pos": b"great !\n", "/custrev.neg": b"broke .\n"})
    assert main(["download", "cr", "--check", "--data-home", str(tmp_path)]) == 1
    assert "cr: missing" in capsys.readouterr().out
    assert main(["download", "cr", "--data-home", str(tmp_path)]) == 0
    assert "1 fetched" in capsys.readouterr().out
    assert main(["download", "cr", "--data-home", str(tmp_path)]) == 0
    assert "0 fetched, 1 already present" in capsys.readouterr().out
    assert handler.hits["/custrev.pos"] == 1
    assert main(["download", "cr", "--check", "--data-home", str(tmp_path)]) == 0
