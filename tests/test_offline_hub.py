"""An index that names a Hugging Face hub model links without asking the hub once the model is in the
Hugging Face cache, and HF_HUB_OFFLINE gives a clear message for one that is not. The hub is a real local
HTTP server (HF_ENDPOINT) that counts what it is asked."""

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "toolbox"
HUB_NAME = "ontolink-test/minilm-copy"


@pytest.fixture
def hub():
    asked = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_HEAD = do_POST = do_GET

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", asked
    server.shutdown()
    server.server_close()


def _index_naming(dense_index, tmp_path, model):
    index = tmp_path / "idx"
    shutil.copytree(dense_index, index)
    manifest = json.loads((index / "manifest.json").read_text())
    manifest["index"]["encoder"]["model"] = model
    (index / "manifest.json").write_text(json.dumps(manifest))
    return index


def _hf_cache_with_the_packaged_model(home):
    """HF_HOME/hub holding the packaged all-MiniLM-L6-v2 as the hub model HUB_NAME, laid out as
    huggingface_hub caches a download (refs/main naming a snapshot)."""
    from ontolink.encoders.model_files import resolve_model_path

    source = Path(resolve_model_path("all-MiniLM-L6-v2"))
    repository = home / "hub" / f"models--{HUB_NAME.replace('/', '--')}"
    shutil.copytree(source, repository / "snapshots" / ("0" * 40))
    (repository / "refs").mkdir()
    (repository / "refs" / "main").write_text("0" * 40)


def _link(index, environment):
    return subprocess.run([sys.executable, "-m", "ontolink", "link", "--index", str(index), "--top-k", "2"],
                          input='{"id": "m1", "mention": "seizures"}\n', capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(PACKAGE_DIR), **environment})


def test_a_hub_model_in_the_cache_is_loaded_without_asking_the_hub(dense_index, tmp_path, hub):
    endpoint, asked = hub
    _hf_cache_with_the_packaged_model(tmp_path / "hf")
    environment = {"HF_HOME": str(tmp_path / "hf"), "HF_ENDPOINT": endpoint}
    environment.pop("HF_HUB_OFFLINE", None)
    result = _link(_index_naming(dense_index, tmp_path, HUB_NAME), environment)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["candidates"][0]["id"]
    assert asked == []  # asked for the model's revision before, on every run


def test_hf_hub_offline_says_why_a_model_cannot_be_loaded(dense_index, tmp_path, hub):
    endpoint, asked = hub
    environment = {"HF_HOME": str(tmp_path / "hf"), "HF_ENDPOINT": endpoint, "HF_HUB_OFFLINE": "1"}
    result = _link(_index_naming(dense_index, tmp_path, "ontolink-test/not-downloaded"), environment)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "HF_HUB_OFFLINE is set and the model is not in the Hugging Face cache" in result.stderr
    assert asked == []
