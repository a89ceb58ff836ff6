"""What every fine-tuning command shares: seeded epochs, per-epoch checkpoints, exact resume.

A checkpoint is a directory ``OUTPUT.checkpoint`` (manifest + model files +
optimizer state in safetensors, no pickle), replaced atomically after each
epoch. Everything random in an epoch derives from (seed, epoch), so a run
resumed from a checkpoint gives the same weights as an uninterrupted one.
"""

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from ontolink.core.errors import InputError
from ontolink.core.io import warn, read_records
from ontolink.core import signal_guard
from ontolink.core.manifest import artifact_directory, read_manifest
from ontolink.training.options import HOLDOUT_SHARE
from ontolink.core.device import TRAIN_PRECISION_VARIABLE, training_precision
from ontolink.core.progress import progress_bar
from ontolink.core.records import pair_validator

OPTIMIZER_FILES = ("optimizer.safetensors", "optimizer.json")


def checkpoint_path(output, suffix="checkpoint"):
    output = Path(output)
    return output.parent / f"{output.name}.{suffix}"


def epoch_random(seed, epoch):
    """The numpy generator of one epoch; also reseeds torch (dropout, initialisation)."""
    import torch

    torch.manual_seed(seed * 1_000_003 + epoch)
    return np.random.default_rng([seed, epoch])


def save_optimizer(optimizer, directory):
    from safetensors.torch import save_file

    state = optimizer.state_dict()
    tensors = {f"{parameter}.{key}": value.detach().cpu().contiguous()
               for parameter, values in state["state"].items() for key, value in values.items()}
    save_file(tensors, str(directory / "optimizer.safetensors"))
    with open(directory / "optimizer.json", "w", encoding="utf-8") as handle:
        json.dump({"param_groups": state["param_groups"]}, handle)


def load_optimizer(optimizer, directory):
    from safetensors.torch import load_file

    tensors = load_file(str(directory / "optimizer.safetensors"))
    with open(directory / "optimizer.json", encoding="utf-8") as handle:
        groups = json.load(handle)["param_groups"]
    state = {}
    for name, value in tensors.items():
        parameter, key = name.split(".", 1)
        state.setdefault(int(parameter), {})[key] = value
    optimizer.load_state_dict({"state": state, "param_groups": groups})


class Checkpoints:
    """Per-epoch checkpoints of one training run (``kind`` names the artifact)."""

    def __init__(self, output, kind, options, force=False):
        self.output = Path(output)
        self.force = force  # replace OUTPUT (and its checkpoints) whatever they hold
        self.path = checkpoint_path(output)
        self.best_path = checkpoint_path(output, "best")
        self.kind = f"{kind}-checkpoint"
        self.options = options
        self.saved = None  # the manifest of the checkpoint resumed from

    def resumable(self, resume):
        """The checkpoint manifest to resume from, or None (refusing one made with other settings)."""
        if not resume:
            return None
        if not self.path.exists():
            warn(f"no checkpoint at {self.path}: starting from the backbone")
            return None
        saved = read_manifest(self.path, self.kind, required_files=OPTIMIZER_FILES)
        if saved["options"] != self.options:
            changed = sorted(key for key in self.options if saved["options"].get(key) != self.options[key])
            raise InputError(f"checkpoint was made with other settings ({', '.join(changed) or 'backbone'}); "
                             "rerun without --resume to start over", self.path)
        warn(f"resuming from {self.path} after epoch {saved['epoch']}")
        return saved

    def start(self, resume, load_model, make_optimizer):
        """(model, optimizer, losses, first epoch): from the checkpoint when resuming, else fresh."""
        saved = self.saved = self.resumable(resume)
        if saved is None:
            self.drop_unresumable()  # a best model a killed run left (SIGKILL, power) with no checkpoint
            model = load_model(None)
            return model, make_optimizer(model), [], 0
        model = load_model(str(self.path))
        optimizer = make_optimizer(model)
        load_optimizer(optimizer, self.path)
        return model, optimizer, list(saved["losses"]), saved["epoch"]

    def save(self, epoch, losses, save_model, optimizer, extra=None):
        with artifact_directory(self.path, {"artifact": self.kind, "epoch": epoch, "options": self.options,
                                            "losses": losses, **(extra or {})}, force=self.force) as directory:
            save_model(directory)
            save_optimizer(optimizer, directory)

    def save_best(self, epoch, save_model):
        """Keep the model after ``epoch`` (0: the starting model) as the best so far."""
        with artifact_directory(self.best_path, {"artifact": f"{self.kind}-best", "epoch": epoch,
                                                 "options": self.options}, force=self.force) as directory:
            save_model(directory)

    def best_epoch(self):
        """The epoch kept in OUTPUT.best (None without one); refuses a resume that lost it."""
        if not self.best_path.exists():
            if self.saved is not None and self.saved.get("validation"):
                raise InputError(f"the best model so far ({self.best_path}) is missing; rerun without --resume",
                                 self.path)
            return None
        return read_manifest(self.best_path, f"{self.kind}-best")["epoch"]

    def drop_unresumable(self):
        """Drop OUTPUT.best when no checkpoint was saved beside it (a run stopped before its first epoch ended):
        --resume could not use it, and it holds a whole model."""
        if not self.path.exists():
            shutil.rmtree(self.best_path, ignore_errors=True)

    def discard(self):
        """Drop this run's checkpoints (a run refused after training)."""
        shutil.rmtree(self.path, ignore_errors=True)
        shutil.rmtree(self.best_path, ignore_errors=True)

    def finish(self, manifest, best=False):
        """Publish the last epoch's model (``best``: the one kept by ``save_best``) as OUTPUT (with
        ``manifest``) and drop the checkpoints."""
        source = self.best_path if best else self.path
        if not self.path.exists():
            raise InputError("no epoch was trained (check --epochs)", self.output)
        with artifact_directory(self.output, manifest, force=self.force) as directory:
            for item in source.iterdir():
                if item.name not in ("manifest.json", *OPTIMIZER_FILES):
                    (shutil.copytree if item.is_dir() else shutil.copy2)(item, directory / item.name)
        shutil.rmtree(self.path, ignore_errors=True)
        shutil.rmtree(self.best_path, ignore_errors=True)


# glibc's mallopt parameter for the size from which malloc maps memory of its own, returned on free
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 1 << 20


def return_freed_memory():
    """Have glibc give large freed blocks back to the system at once (Linux; elsewhere nothing).

    By default glibc raises its mmap threshold to the largest block freed so far, after which the
    many-MB activation tensors of a training step come from the heap and stay in the process when
    freed: a retriever step on 128 pairs held ~3x its live tensors' memory (peak RSS 2.4 GB against
    1.2 GB with a fixed 1 MB threshold, 32 pairs)."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        return bool(ctypes.CDLL(None).mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False


def mixed_precision(precision, device, bf16=None):
    """(autocast dtype or None, whether a grad scaler is needed) for ``precision`` on ``device``: auto is bf16 on
    a GPU that has it (fp32's exponent range: gradients do not underflow, so no scaler), fp16 with a scaler on
    other GPUs, fp32 on a CPU (core.device.training_precision). ``bf16``: whether the device has native bf16
    (None: ask it)."""
    import torch

    precision = training_precision(precision, device, bf16)
    return {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision), precision == "fp16"


def backward(loss, scaler):
    """Accumulate gradients, through the fp16 grad scaler on CUDA."""
    (scaler.scale(loss) if scaler is not None else loss).backward()


def optimizer_step(optimizer, scaler):
    """Apply the accumulated gradients and clear them."""
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    optimizer.zero_grad()


def run_epochs(model, optimizer, checkpoints, save_model, batch_loss, item_count, batch_size, epochs, seed,
               first_epoch=0, losses=(), device="cpu", accumulate=None, after_epoch=None, precision="auto"):
    """Train epochs ``first_epoch`` .. ``epochs`` − 1 and checkpoint after each; return (losses, seconds).

    ``after_epoch(epoch)`` (optional) runs after each epoch, before its checkpoint, and returns fields
    the checkpoint's manifest records (a validation history, say).

    ``batch_loss(indices, rng)`` gives the loss of one batch of items (run under bf16 or fp16 autocast on CUDA:
    ``precision``, see ``mixed_precision``); the items are shuffled per epoch with the epoch's generator. With
    ``accumulate`` a batch is run ``accumulate`` items at a time and the gradients summed, weighted by size: the
    same update in bounded memory, valid only where the loss is a mean of independent per-item terms (not for
    in-batch negatives).
    """
    import torch

    return_freed_memory()
    # ONTOLINK_TRAIN_PRECISION (fp32, fp16, bf16) overrides auto for every trainer: what a GPU check compares
    amp_dtype, scaled = mixed_precision(os.environ.get(TRAIN_PRECISION_VARIABLE) or precision, device)
    scaler = torch.amp.GradScaler("cuda") if scaled else None
    losses = list(losses)
    started = time.perf_counter()
    # SIGTERM's default action ends the process where it stands: held as SystemExit(143) instead (SIGINT as
    # KeyboardInterrupt), so that a run stopped before its first checkpoint can drop OUTPUT.best below
    held = signal_guard.hold()
    try:
        for epoch in range(first_epoch, epochs):
            rng = epoch_random(seed, epoch)
            order = rng.permutation(item_count)
            model.train()
            epoch_losses = []
            with progress_bar(total=item_count, desc=f"epoch {epoch + 1}/{epochs}", unit="pair") as bar:
                for start in range(0, item_count, batch_size):
                    indices = order[start:start + batch_size]
                    step = accumulate or len(indices)
                    batch_loss_value = 0.0
                    for part in range(0, len(indices), step):
                        chunk = indices[part:part + step]
                        with torch.autocast("cuda", dtype=amp_dtype or torch.float16, enabled=amp_dtype is not None):
                            loss = batch_loss(chunk, rng) * (len(chunk) / len(indices))
                        backward(loss, scaler)
                        batch_loss_value += float(loss.detach())
                    optimizer_step(optimizer, scaler)
                    epoch_losses.append(batch_loss_value)
                    bar.update(len(indices))
            losses.append(float(np.mean(epoch_losses)))
            warn(f"epoch {epoch + 1}/{epochs}: loss {losses[-1]:.4f} ({time.perf_counter() - started:.0f} s)")
            extra = after_epoch(epoch + 1) if after_epoch is not None else None
            checkpoints.save(epoch + 1, losses, save_model, optimizer, extra)
    except BaseException:  # a failure or a signal before the first checkpoint leaves nothing to resume from
        checkpoints.drop_unresumable()
        raise
    finally:
        if held:
            signal_guard.release()
    return losses, time.perf_counter() - started


# --- Hold-out and keep-best: a trainer never publishes a model that lost to the one it started from ---

DEFAULT_HOLDOUT_SHARE = HOLDOUT_SHARE
HOLDOUT_STREAM = 7919  # the held-out split's own random stream, apart from the epochs'
# "One real optimiser step": a batch this full at least. Fewer pairs give a step on a handful of examples, which
# moves the weights by noise (the 12 LPT name pairs: one step, held-out R@1 down).
MIN_TRAINING_ITEMS = 16
# A loss still above this share of chance (ln of the candidates each pair is scored against) after the last epoch
# never left chance: the model ranks no better than a coin (the reranker: 3.04 against ln 21 = 3.04).
AT_CHANCE = 0.95


def holdout_split(items, entities_of, share, seed):
    """(training, held-out) items: a seeded ``share`` of the entities, with every item that names one of them,
    held out, so that no entity is on both sides (an item naming several entities holds them all out).
    The same items, share and seed give the same split, whatever the items' order."""
    if not share:
        return list(items), []
    entities = sorted({entity for item in items for entity in entities_of(item)})
    count = int(round(share * len(entities)))
    rng = np.random.default_rng([seed, HOLDOUT_STREAM])
    held = {entities[row] for row in rng.choice(len(entities), size=count, replace=False)} if count else set()
    while True:  # an item naming a held entity takes its other entities along (labeled mentions with several golds)
        grown = held | {entity for item in items if held & set(entities_of(item)) for entity in entities_of(item)}
        if grown == held:
            break
        held = grown
    held_items = [item for item in items if held & set(entities_of(item))]
    training = [item for item in items if not held & set(entities_of(item))]
    if not held_items or not training:
        side = "no held-out pair" if not held_items else "no training pair"
        raise InputError(f"--holdout-share {share} of {len(entities)} entities ({len(items)} pairs) leaves {side}: "
                         "give more pairs or another share (0: no hold-out, and no check that the model improved)")
    return training, held_items


class Holdout:
    """What a trainer learns from and what it is judged on: ``prepare`` splits the items by entity and says
    whether there are enough to learn (``force`` trains anyway, and the model is then never called improved)."""

    def __init__(self, items, entities_of, share, seed, force=False, needed=MIN_TRAINING_ITEMS, unit="pairs"):
        self.share, self.force, self.needed, self.unit = share, force, needed, unit
        self.problem = None  # why the model cannot count as improved, whatever the held-out scores say
        try:
            self.training, self.held_out = holdout_split(items, entities_of, share, seed)
        except InputError as error:
            if not force:
                raise
            warn(f"{error}; training on all {len(items)} {unit} anyway (--force)")
            self.training, self.held_out = list(items), []
            self.problem = str(error)
        self.entities = len({entity for item in self.held_out for entity in entities_of(item)})
        if len(self.training) < needed:
            self.refuse(f"{len(self.training)} training {unit} (after holding out {len(self.held_out)}) are fewer "
                        f"than one real optimiser step needs ({needed}): nothing to learn from")

    def refuse(self, message):
        """Stop (exit 2) on data that cannot teach the model, unless ``force``: then say so and go on."""
        if not self.force:
            raise InputError(f"{message}; give more pairs, or --force to write a model anyway (marked not "
                             "improved)")
        warn(f"{message}; going on (--force): the model is marked not improved")
        self.problem = self.problem or message

    def check_chance(self, losses, chance, checkpoints=None):
        """Refuse (or, with ``force``, mark) a run whose loss never left chance (ln of the candidates)."""
        if chance and losses and min(losses) >= AT_CHANCE * chance:
            if checkpoints is not None and not self.force:
                checkpoints.discard()
            self.refuse(f"the training loss never left chance ({min(losses):.3f} against ln {round(np.exp(chance))} = "
                        f"{chance:.3f}) on {len(self.training)} {self.unit}: the model learned nothing")

    def describe(self):
        return {"share": self.share, "pairs": len(self.held_out), "entities": self.entities,
                "training_pairs": len(self.training)}


class KeepBest:
    """Scores the starting model (epoch 0) and every epoch on the held-out items, keeps the best in
    OUTPUT.best, and reports. ``score()`` returns {"R@1", "MRR", "queries"} of the model as it is now;
    ``start_scores`` (when the start is no model of this kind, e.g. the index's own order before a reranker)
    replaces scoring the model at epoch 0, and then only trained epochs are saved as the best."""

    def __init__(self, holdout, checkpoints, score, save_model, start_scores=None, start="the start"):
        self.holdout, self.checkpoints, self.score, self.save_model = holdout, checkpoints, score, save_model
        self.start_label = start
        saved = checkpoints.saved or {}
        self.history = list(saved.get("validation", []))
        self.start_scores = start_scores
        self.best_trained = saved.get("best_trained")

    @property
    def active(self):
        return bool(self.holdout.held_out)

    def begin(self):
        """Score the start (unless resuming, which already did)."""
        if not self.active or self.history:
            return
        scores = self.start_scores if self.start_scores is not None else self.score()
        self.history.append({"epoch": 0, **scores})
        if self.start_scores is None:
            self.checkpoints.save_best(0, self.save_model)  # run_epochs drops it if stopped before a checkpoint

    def after_epoch(self, epoch):
        """run_epochs' ``after_epoch``: score the model after ``epoch``, keep it when it is the best so far."""
        if not self.active:
            return None
        scores = {"epoch": epoch, **self.score()}
        trained = [entry for entry in self.history if entry["epoch"] > 0 or self.start_scores is None]
        if not trained or key(scores) > max(map(key, trained)):
            self.checkpoints.save_best(epoch, self.save_model)
            self.best_trained = epoch
        self.history.append(scores)
        return {"validation": self.history, "best_trained": self.best_trained}

    def result(self):
        """Manifest fields: the held-out history, the epoch kept (0: the start), whether it beat the start."""
        if not self.active:
            return {"improved": False if self.holdout.problem else None, "held_out": self.holdout.describe(),
                    **({"not_improved_because": self.holdout.problem} if self.holdout.problem else {})}
        best = max(self.history, key=key)  # the first of equals: the start wins a tie
        improved = best["epoch"] > 0 and not self.holdout.problem
        fields = {"held_out": self.holdout.describe(), "validation": self.history, "kept_epoch": best["epoch"],
                  "improved": improved, "start_R@1": self.history[0]["R@1"], "kept_R@1": best["R@1"]}
        if self.holdout.problem:
            fields["not_improved_because"] = self.holdout.problem
        return fields

    def publish_best(self):
        """Whether OUTPUT gets the weights kept in OUTPUT.best (else the last epoch's)."""
        return self.active and self.checkpoints.best_path.exists()


def key(scores):
    """What "better on the held-out pairs" means: higher R@1, ties (a few dozen queries) broken by MRR."""
    return scores["R@1"], scores["MRR"]


def held_out_summary(manifest, start="the start", fitted=False):
    """The summary's clause on the held-out pairs: "held-out R@1 0.61 from the start, 0.66 after epoch 2: kept
    epoch 2", or that nothing beat the start (``fitted``: one fit, no epochs, as the ranker's)."""
    if manifest.get("improved") is None:
        return "no pairs held out (--holdout-share 0): improvement not measured"
    if "validation" not in manifest:
        return f"NOT IMPROVED: {manifest['not_improved_because']}"
    history = manifest["validation"]
    best_trained = max(history[1:], key=key) if len(history) > 1 else None
    text = f"held-out R@1 {history[0]['R@1']:.3f} from {start}"
    if best_trained is not None:
        text += f", {best_trained['R@1']:.3f} " + ("after fitting" if fitted else f"after epoch {best_trained['epoch']}")
    text += f" ({manifest['held_out']['pairs']} held out, of {manifest['held_out']['entities']} entities)"
    if manifest["improved"]:
        return text + (": kept the ranker" if fitted else f": kept epoch {manifest['kept_epoch']}")
    if manifest.get("not_improved_because"):
        return text + f": NOT IMPROVED ({manifest['not_improved_because']})"
    return text + f": NOT IMPROVED, nothing beat {start}"

def rank_of(scores, gold):
    """The 1-based rank of ``gold`` among ``scores`` (a tie goes its way)."""
    return int((scores > scores[gold]).sum()) + 1


def rank_scores(ranks):
    """{"R@1", "MRR", "queries"} of 1-based ranks (None: the answer was not among the candidates)."""
    return {"R@1": round(sum(rank == 1 for rank in ranks) / max(1, len(ranks)), 4),
            "MRR": round(sum(1 / rank for rank in ranks if rank) / max(1, len(ranks)), 4), "queries": len(ranks)}


def read_pairs(path: str, ontology: Any, skip_invalid: bool = False, accept_gold: bool = False) -> list[dict[str, Any]]:
    """The Pair records of ``path`` (``accept_gold``: labeled Mention records too), each checked against
    ``ontology``: what every trainer reads."""
    return list(read_records(path, validate=pair_validator(ontology, accept_gold), skip_invalid=skip_invalid))
