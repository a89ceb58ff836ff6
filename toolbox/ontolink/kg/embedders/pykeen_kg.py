"""Any PyKEEN model as a KG embedder, with the published settings of text–KG alignment (docs/methods.md) as defaults.

Training is PyKEEN's own loop (sLCWA or LCWA); early stopping on validation MRR
(filtered, both sides) is done here, keeping the best weights in memory, so
nothing goes through PyKEEN's torch-pickle checkpoints: the tensors are read
off the trained model and written as safetensors by the caller.
"""

from __future__ import annotations

import inspect
import logging
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.kg.embedders import KG_EMBEDDERS, KGEmbedder, KGEmbeddingResult
from ontolink.core.errors import InputError, UsageError
from ontolink.core.io import plural, warn
from ontolink.core.device import resolve_device
from ontolink.core.options import AUTO_DEVICE, DEFAULT_SEED

if TYPE_CHECKING:
    from ontolink.formats.triples import TripleSet

# The published settings (docs/methods.md, text–KG alignment); models not listed use PyKEEN's own defaults.
PRESETS: dict[str, dict[str, Any]] = {
    "rotate": dict(model_kwargs={"embedding_dim": 500}, loss="nssa",
                   loss_kwargs={"margin": 9.0, "adversarial_temperature": 0.91},
                   training_loop="slcwa", negatives=467),
    "tucker": dict(model_kwargs={"embedding_dim": 200, "relation_dim": 65}, loss="bceaftersigmoid",
                   loss_kwargs={}, training_loop="lcwa", label_smoothing=0.1),
}
DEFAULTS: dict[str, Any] = dict(epochs=300, batch_size=256, lr=1e-3, validation_fraction=0.1, eval_every=10, patience=3,
                eval_batch_size=256, negatives=1, label_smoothing=None)


def _quiet() -> None:
    for name in ("pykeen", "torch_max_mem", "class_resolver"):
        logging.getLogger(name).setLevel(logging.ERROR)


def resolve_model(name: str) -> Any:
    """PyKEEN's model class for ``name`` (case-insensitive), or an InputError listing the known ones."""
    _quiet()
    from pykeen.models import model_resolver

    try:
        return model_resolver.lookup(name)
    except (KeyError, ValueError):
        known = sorted(cls.__name__ for cls in model_resolver.lookup_dict.values())
        raise InputError(f"unknown KG embedding method {name!r}: use rdf2vec or a PyKEEN model "
                         f"({', '.join(known)})") from None


def _accepts(function: Callable[..., Any], name: str) -> bool:
    parameters = inspect.signature(function).parameters
    return name in parameters


def _as_real(tensor: Any) -> np.ndarray:
    """(n, ...) tensor → (n, d) float32 numpy; complex values become [real | imaginary] (2× the dimension)."""
    import torch

    tensor = tensor.detach().cpu()
    tensor = tensor.reshape(len(tensor), -1)
    if tensor.is_complex():
        tensor = torch.cat([tensor.real, tensor.imag], dim=-1)
    return tensor.float().numpy().astype(np.float32, copy=False)


@KG_EMBEDDERS.register("pykeen")
class PyKEENEmbedder(KGEmbedder):
    method = "pykeen"

    def __init__(self, method: str, dim: int | None = None, relation_dim: int | None = None,
                 epochs: int | None = None, batch_size: int | None = None, lr: float | None = None,
                 negatives: int | None = None, margin: float | None = None,
                 adversarial_temperature: float | None = None, label_smoothing: float | None = None,
                 validation_fraction: float | None = None, eval_every: int | None = None,
                 patience: int | None = None, eval_batch_size: int | None = None, loss: str | None = None,
                 training_loop: str | None = None, model_kwargs: dict[str, Any] | None = None,
                 **unknown: Any) -> None:
        if unknown:
            raise InputError(f"PyKEEN models have no option(s) {', '.join(sorted(unknown))}")
        self.model_class = resolve_model(method)
        preset = PRESETS.get(self.model_class.__name__.lower(), {})
        self.model_kwargs: dict[str, Any] = dict(preset.get("model_kwargs", {}))
        self.model_kwargs.update(model_kwargs or {})
        init = self.model_class.__init__
        for key, value in (("embedding_dim", dim), ("relation_dim", relation_dim)):
            if value is None:
                continue
            if not _accepts(init, key):
                raise InputError(f"{self.model_class.__name__} has no {key.replace('_', '-')} "
                                 f"(--{'dim' if key == 'embedding_dim' else 'relation-dim'})")
            self.model_kwargs[key] = value
        self.loss = loss or preset.get("loss")
        self.loss_kwargs: dict[str, Any] = dict(preset.get("loss_kwargs", {}))
        for key, setting in (("margin", margin), ("adversarial_temperature", adversarial_temperature)):
            if setting is not None:
                self.loss_kwargs[key] = setting
        self.training_loop = (training_loop or preset.get("training_loop") or "slcwa").lower()
        if self.training_loop not in ("slcwa", "lcwa"):
            raise InputError(f"training loop {training_loop!r}: use slcwa or lcwa")
        given = dict(epochs=epochs, batch_size=batch_size, lr=lr, validation_fraction=validation_fraction,
                     eval_every=eval_every, patience=patience, eval_batch_size=eval_batch_size,
                     negatives=negatives if negatives is not None else preset.get("negatives"),
                     label_smoothing=label_smoothing if label_smoothing is not None else
                     preset.get("label_smoothing"))
        self.options: dict[str, Any] = {key: DEFAULTS[key] if value is None else value for key, value in given.items()}
        if self.training_loop == "lcwa" and negatives is not None:
            raise InputError(f"--negatives applies to sLCWA training; {self.model_class.__name__} is trained "
                             "with LCWA (every entity is a negative)")
        if not 0 <= self.options["validation_fraction"] < 1:
            raise InputError("--validation-fraction must be in [0, 1)")

    def _describe(self) -> dict[str, Any]:
        return {
            "method": "pykeen",
            "model": self.model_class.__name__,
            "model_kwargs": self.model_kwargs,
            "loss": self.loss or self.model_class.loss_default.__name__,
            "loss_kwargs": self.loss_kwargs,
            "training_loop": self.training_loop,
            "optimizer": "Adam",
            **{key: value for key, value in self.options.items()
               if not (key == "negatives" and self.training_loop == "lcwa")},
        }

    def fit(self, triple_set: TripleSet, seed: int = DEFAULT_SEED, device: str = AUTO_DEVICE, progress: Any = None
            ) -> KGEmbeddingResult:
        _quiet()
        import torch
        from pykeen.evaluation import RankBasedEvaluator
        from pykeen.models import model_resolver
        from pykeen.training import training_loop_resolver
        from pykeen.training.callbacks import TrainingCallback
        from pykeen.triples import TriplesFactory
        from pykeen.utils import set_random_seed

        options = self.options
        device = resolve_device(device)
        set_random_seed(seed)
        factory = TriplesFactory(
            mapped_triples=torch.as_tensor(triple_set.mapped, dtype=torch.long),
            entity_to_id={entity: row for row, entity in enumerate(triple_set.entity_ids)},
            relation_to_id={relation: row for row, relation in enumerate(triple_set.relation_ids)},
        )
        validation: Any = None  # a TriplesFactory where some triples are held out
        training = factory
        fraction = options["validation_fraction"]
        if fraction > 0 and len(triple_set) * fraction >= 1 and len(triple_set) >= 10:
            training, validation = factory.split([1 - fraction, fraction], random_state=seed)
        loss_kwargs = dict(self.loss_kwargs)
        try:
            model = model_resolver.make(self.model_class, triples_factory=training, loss=self.loss,
                                        loss_kwargs=loss_kwargs or None, random_seed=seed, **self.model_kwargs)
        except TypeError as error:  # a keyword the model does not take (--model-kwargs '{"bogus": 1}')
            raise UsageError(f"--model-kwargs: {self.model_class.__name__} refused them ({error})") from None
        model = model.to(device)
        optimizer = torch.optim.Adam(params=model.get_grad_params(), lr=options["lr"])
        loop_kwargs: dict[str, Any] = dict(model=model, triples_factory=training, optimizer=optimizer)
        if self.training_loop == "slcwa":
            loop_kwargs["negative_sampler_kwargs"] = {"num_negs_per_pos": options["negatives"]}
        loop = training_loop_resolver.make(self.training_loop, **loop_kwargs)

        curve = []
        state: dict[str, Any] = {"best": -1.0, "epoch": None, "weights": None, "bad": 0, "last": time.perf_counter()}
        evaluator = RankBasedEvaluator(filtered=True)
        epochs = options["epochs"]
        self_name, started = self.model_class.__name__, time.perf_counter()

        def validation_mrr() -> float:
            result = evaluator.evaluate(model, validation.mapped_triples, batch_size=options["eval_batch_size"],
                                        use_tqdm=False, additional_filter_triples=[training.mapped_triples])
            model._free_graph_and_cache()
            return float(result.get_metric("both.realistic.inverse_harmonic_mean_rank"))

        class EarlyStopping(TrainingCallback):
            """Validation MRR every ``eval_every`` epochs (and at the last); best weights kept in memory."""

            def post_epoch(self, epoch: int, epoch_loss: float, **kwargs: Any) -> None:
                now = time.perf_counter()
                entry = {"epoch": epoch, "loss": float(epoch_loss), "seconds": round(now - state["last"], 3)}
                if validation is not None and (epoch % options["eval_every"] == 0 or epoch == epochs):
                    mrr = validation_mrr()
                    entry["val_mrr"] = mrr
                    warn(f"{self_name}: epoch {epoch}/{epochs}, loss {float(epoch_loss):.4f}, validation MRR "
                         f"{mrr:.4f} ({time.perf_counter() - started:.0f} s)")
                    if mrr > state["best"]:
                        state.update(best=mrr, epoch=epoch, bad=0,
                                     weights={key: value.detach().clone() for key, value in
                                              model.state_dict().items()})
                    else:
                        state["bad"] += 1
                        if state["bad"] >= options["patience"]:
                            self.training_loop._should_stop = True
                    model.train()
                curve.append(entry)
                state["last"] = time.perf_counter()
                if progress is not None:
                    progress.update(1)

        # A batch larger than the training instances gives none at all when the last batch is dropped
        # (models with batch norm, e.g. TuckER): clamp it on small graphs.
        instances = (len(torch.unique(training.mapped_triples[:, :2], dim=0)) if self.training_loop == "lcwa"
                     else training.num_triples)  # LCWA: one instance per (head, relation)
        batch_size = max(1, min(options["batch_size"], instances))
        train_kwargs = dict(triples_factory=training, num_epochs=epochs, batch_size=batch_size,
                            use_tqdm=False, use_tqdm_batch=False, callbacks=[EarlyStopping()])
        if options["label_smoothing"]:
            train_kwargs["label_smoothing"] = options["label_smoothing"]
        with tempfile.TemporaryDirectory(prefix="ontolink-pykeen-") as scratch, warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*pin_memory.*")  # PyKEEN asks for it on CPU too
            try:
                loop.train(checkpoint_directory=scratch, **train_kwargs)
            except ValueError as error:  # what PyKEEN refuses of this graph and model (batch norm on one triple)
                raise InputError(f"PyKEEN cannot train {self.model_class.__name__} on this graph "
                                 f"({plural(training.num_triples, 'training triple')}): {error}") from None
        if state["weights"] is not None:
            model.load_state_dict(state["weights"])
        model.eval()
        model_: Any = model  # PyKEEN's ERModel: its representations are ModuleLists
        with torch.no_grad():
            entity_representations = [representation(indices=None) for representation in
                                      model_.entity_representations]
            relation_representations = [representation(indices=None) for representation in
                                        model_.relation_representations]
        complex_valued = bool(entity_representations[0].is_complex() or relation_representations[0].is_complex())
        entity = _as_real(entity_representations[0])
        relation = _as_real(relation_representations[0])
        extra = {}
        for prefix, representations in (("entity", entity_representations), ("relation", relation_representations)):
            for position, tensor in enumerate(representations[1:], 1):
                extra[f"{prefix}_{position}"] = _as_real(tensor)
        describe = self._describe() | {
            "device": device,
            "batch_size_used": batch_size,
            "triples_train": int(training.num_triples),
            "triples_validation": int(validation.num_triples) if validation is not None else 0,
            "epochs_run": len(curve),
            "best_epoch": state["epoch"],
            "best_validation_mrr": state["best"] if state["epoch"] is not None else None,
            "complex": complex_valued,
        }
        if complex_valued:
            describe["complex_layout"] = "[real parts | imaginary parts]: the stored dimension is twice the complex one"
            describe["complex_dimension"] = {"entity": entity.shape[1] // 2, "relation": relation.shape[1] // 2}
        return KGEmbeddingResult(entity=entity, relation=relation, curve=curve, describe=describe, extra=extra)
