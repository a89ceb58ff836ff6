"""The Ray engine: batches go through a Ray Data ``map_batches`` over an actor pool, each actor loading
the step's index or model once.

Each dataset row holds one batch, pickled (records come back exactly as they went, whatever their
fields), in a block of its own, so the pool's actors take batches one by one; ``preserve_order`` yields
the results in input order as soon as they and all before them are done. Input files (``map_inputs``)
are read by Ray Data tasks, one per file, with the reader the command uses locally, so a bad line is
the same FILE:LINE error, raised after the results of every batch before it. Batches made here (stdin,
an index's names, a library caller's iterator: ``map``) go to Ray Data a window at a time
(``WINDOW_BATCHES``, ``WINDOW_BYTES``), so memory stays bounded on endless input; each window is one
Ray Data execution, whose pool loads the step's function once per actor. An actor that dies is
restarted by Ray and its batch redone (``max_restarts``, ``max_task_retries``); a batch's result does
not depend on which actor or attempt computed it. An exception of the step's function travels back as
that batch's result and is raised in its place, after the results before it.
"""

from __future__ import annotations

import logging
import os
import pickle
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from types import ModuleType
from typing import Any

from ontolink.engines import ENGINES, Engine
from ontolink.core.errors import InputError, OntolinkError
from ontolink.core.io import ReadStats

RESTARTS = 3  # per actor and per batch; a batch that kills its actor this often is a bug, not bad luck
# a window is one Ray Data execution (its actors load the index or model once): large enough that this
# load is a small share of the window's work, small enough to hold on the driver and in the object store
WINDOW_BATCHES = 512
WINDOW_BYTES = 64 * 2 ** 20
# what a row's pickled (kind, value) holds: a batch or its result, the exception a batch raised, the
# end of an input file read by a Ray Data task
BATCH, FAILED, ENDED = "batch", "failed", "ended"


def import_ray() -> ModuleType:
    try:
        import ray
        import ray.data  # noqa: F401 (ray[data]: Ray Core alone lacks it)
    except ImportError:
        raise OntolinkError("--engine ray needs Ray Data: pip install 'ontolink[ray]'") from None
    return ray


def actor_resources(device: str, cluster_gpus: float) -> dict[str, int]:
    """What each actor of the pool asks the cluster for: one GPU where ``device`` allows CUDA (``auto``,
    ``cuda``, ``cuda:N``) and the cluster has one, else one CPU slot."""
    wants_gpu = str(device) == "auto" or str(device).startswith("cuda")
    if wants_gpu and cluster_gpus >= 1:
        return {"num_cpus": 1, "num_gpus": 1}
    return {"num_cpus": 1, "num_gpus": 0}


def check_actor_device(device: str) -> None:
    """Refuse ``cuda:N``: Ray gives each actor its own GPU, which the actor sees as its only one (cuda:0),
    so a GPU number chosen on the driver names nothing there."""
    if str(device).startswith("cuda:"):
        raise InputError(f"--device {device} names one GPU, but on Ray each actor is given a GPU of its own: "
                         "use --device auto or cuda (and CUDA_VISIBLE_DEVICES or the cluster's resources to "
                         "choose GPUs)")


def next_or_error(iterator: Iterator[Any]) -> tuple[Any, BaseException | None]:
    """``(item, None)``, ``(None, the exception reading raised)``, or ``(None, StopIteration())``."""
    try:
        return next(iterator), None
    except StopIteration as end:
        return None, end
    except Exception as error:
        return None, error


def windows(batches: Iterable[Any], max_batches: int = WINDOW_BATCHES, max_bytes: int = WINDOW_BYTES
            ) -> Iterator[tuple[list[bytes], BaseException | None]]:
    """``(pickled (BATCH, batch) list, error)`` windows of an iterable of batches. An exception raised
    while reading (a bad record) ends the windows: it comes with the last one, after the batches read
    before it."""
    pending = iter(batches)
    error = None
    while error is None:
        window: list[bytes] = []
        size = 0
        while error is None and len(window) < max_batches and size < max_bytes:
            batch, error = next_or_error(pending)
            if error is None:
                window.append(pickle.dumps((BATCH, batch), protocol=pickle.HIGHEST_PROTOCOL))
                size += len(window[-1])
        if isinstance(error, StopIteration):
            if window:
                yield window, None
            return
        if window or error is not None:
            yield window, error


def pickled_row(column: str, kind: str, value: Any) -> dict[str, Any]:
    import numpy as np

    try:
        pickled = pickle.dumps((kind, value), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # an exception that does not pickle
        pickled = pickle.dumps((kind, RuntimeError(repr(value))))
    return {column: np.array([pickled], dtype=object)}


class FileBatches:
    """The Ray Data task UDF reading input files: for each (position, path) row, one row per batch of
    ``read(path, stats)``, then an ``ENDED`` row with the reader's counts, the warnings it wrote (on
    stderr, which a Ray worker does not show) and the error that stopped it (a bad line)."""

    def __init__(self, read: Callable[[str, Any], Iterator[Any]]) -> None:
        self.read = read

    def __call__(self, rows: dict[str, Any]) -> Iterator[dict[str, Any]]:
        import contextlib
        import io

        for path in rows["path"]:
            stats, notes = ReadStats(), io.StringIO()
            with contextlib.redirect_stderr(notes):
                batches, error = self.read(str(path), stats), None
            while error is None:
                with contextlib.redirect_stderr(notes):
                    batch, error = next_or_error(batches)
                if error is None:
                    yield pickled_row("batch", BATCH, batch)
            yield pickled_row("batch", ENDED, (stats, notes.getvalue(),
                                               None if isinstance(error, StopIteration) else error))


class BatchRunner:
    """The Ray Data class UDF: holds the step's function (which loads its index or model on its first
    batch, once per actor) and maps a row's pickled ``(BATCH, batch)`` to pickled ``(BATCH, result)``, or
    ``(FAILED, exception)`` where the function raised; other rows pass as they are."""

    def __init__(self, function: Callable[[Any], Any]) -> None:
        self.function = function

    def __call__(self, rows: dict[str, Any]) -> dict[str, Any]:
        (pickled,) = rows["batch"]  # batch_size 1
        kind, value = pickle.loads(pickled)
        if kind != BATCH:
            return {"result": rows["batch"]}
        try:
            return pickled_row("result", BATCH, self.function(value))
        except Exception as error:  # raised on the driver in this batch's place
            return pickled_row("result", FAILED, error)


def ray_log_level() -> int:
    """Ray's own log level on the terminal: ``RAY_LOG_LEVEL`` (debug, info, warning, error) when set, else
    errors only, with the C++ core's lines (``core_worker.cc``) quiet too (``RAY_BACKEND_LOG_LEVEL``, unless
    set): a failure reaches the user through its batch, and Ray's warnings landed over the progress bar."""
    asked = os.environ.get("RAY_LOG_LEVEL")
    if asked:
        return getattr(logging, asked.upper(), logging.WARNING)
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    return logging.ERROR


@ENGINES.register("ray")
class RayEngine(Engine):
    """Joins the cluster at ``address`` (``auto``: the running one; also ``RAY_ADDRESS``), or starts
    a local one with ``workers`` CPUs and shuts it down on close (also after Ctrl-C). Where Ray is
    already initialised in this process (a library caller, the tests), that cluster is used."""

    def __init__(self, workers: int = 1, address: str | None = None, device: str = "auto") -> None:
        super().__init__(workers=workers, address=address, device=device)
        check_actor_device(device)
        ray = import_ray()
        self.connected = False  # True: this engine called ray.init, so close() disconnects
        if not ray.is_initialized():
            self.connected = True
            address = address or os.environ.get("RAY_ADDRESS")
            # log_to_driver off: Ray prints workers' stdout on the driver's stdout, which is our JSONL
            # output; a worker's exception still reaches us through its batch (its logs stay under
            # /tmp/ray/session_latest/logs)
            options = {"logging_level": ray_log_level(), "include_dashboard": False, "log_to_driver": False}
            if address:
                try:
                    ray.init(address=address, **options)
                except ConnectionError as error:
                    raise OntolinkError(f"cannot join the Ray cluster at {address}: {error}") from None
            else:
                ray.init(num_cpus=workers, **options)
        configure_ray_data()
        keep_stdout_for_records()
        self.running: list[Any] = []  # Ray Data executions whose rows are being read

    def map_options(self, max_actors: int) -> dict[str, Any]:
        """``map_batches`` keywords: the actor pool (``workers``, at most ``max_actors``), each actor's
        resources, restarts and settings."""
        import ray

        options = {"compute": ray.data.ActorPoolStrategy(size=min(self.workers, max_actors)), "batch_size": 1,
                   "batch_format": "numpy", "zero_copy_batch": True,
                   **actor_resources(self.device, ray.cluster_resources().get("GPU", 0)),
                   "max_restarts": RESTARTS, "max_task_retries": RESTARTS}
        # the driver's ontolink settings (ONTOLINK_CACHE_DIR: exported models, converted LLMs) hold in
        # the actors too, also on a cluster started before they were set
        settings = {name: value for name, value in os.environ.items() if name.startswith("ONTOLINK_")}
        if settings:
            options["runtime_env"] = {"env_vars": settings}
        return options

    def _outcomes(self, dataset: Any, function: Callable[[Any], Any], max_actors: int) -> Iterator[tuple[str, Any]]:
        """``(kind, value)`` of each row, in order, once ``function`` has run on the ``BATCH`` rows of
        ``dataset`` on the actor pool."""
        import ray

        with warnings.catch_warnings():
            # Ray 2.60 warns of its extra remote args, yet names no parameter for max_restarts
            # and max_task_retries (its default is to retry a dying batch forever)
            warnings.simplefilter("ignore", DeprecationWarning)
            results = dataset.map_batches(BatchRunner, fn_constructor_args=(function,),
                                          **self.map_options(max_actors))
        rows = iter(results.iter_rows())
        self.running.append(rows)
        try:
            for row in rows:
                kind, value = pickle.loads(row["result"])
                if kind == FAILED:
                    raise value
                yield kind, value
        except ray.exceptions.RayError as failure:  # the pool itself failed (restarts spent)
            raise OntolinkError(f"the Ray workers failed ({str(failure).splitlines()[0]}); their logs are in "
                                "the cluster's session logs (/tmp/ray/session_latest/logs, ray-data.log)") from None
        finally:
            self.running.remove(rows)

    def map(self, function: Callable[[Any], Any], batches: Iterable[Any]) -> Iterator[Any]:
        import ray

        for window, error in windows(batches):
            if window:
                dataset = ray.data.from_items([{"batch": pickled} for pickled in window],
                                              override_num_blocks=len(window))
                for _, result in self._outcomes(dataset, function, len(window)):
                    yield result
            if error is not None:  # a bad record: the batches before it are written
                raise error

    def map_inputs(self, function: Callable[[Any], Any], paths: Sequence[str],
                   read: Callable[[str, Any], Iterator[Any]], stats: Any) -> Iterator[tuple[int, Any]]:
        """Files are read by Ray Data tasks, one per file, in the same execution as the actor pool
        (which loads its model once for all of them); stdin is read here (``map``)."""
        import ray

        if any(path in (None, "-") for path in paths):
            yield from super().map_inputs(function, paths, read, stats)
            return
        files = ray.data.from_items([{"path": str(path)} for path in paths], override_num_blocks=len(paths))
        # num_cpus 0: a local cluster has one CPU per actor, and reading is light beside their work
        batches = files.map_batches(FileBatches(read), batch_size=1, batch_format="numpy", num_cpus=0)
        position = 0  # rows come in input order, each file's ending with its ENDED row
        for kind, value in self._outcomes(batches, function, self.workers):
            if kind == BATCH:
                yield position, value
                continue
            file_stats, notes, error = value
            if stats is not None:
                stats.add(file_stats)
            sys.stderr.write(notes)
            if error is not None:  # a bad line: the batches before it are written
                raise error
            position += 1

    def close(self) -> None:
        import ray

        # an execution left unfinished (Ctrl-C, a bad line, `| head`) is ended while Ray is still up:
        # ended later by the garbage collector, Ray Data would start a new local cluster to end it in
        for rows in list(self.running):
            rows.close()
        if self.connected:
            # disconnecting ends the actors this driver owns (and a cluster it started)
            ray.shutdown()
            self.connected = False


def configure_ray_data() -> None:
    """Results in input order, one block per yielded batch; no Ray Data progress bars or logs."""
    from ray.data import DataContext

    context = DataContext.get_current()
    context.execution_options.preserve_order = True
    # a block holds each batch a reading task yields, not as many as fit in Ray's default 128 MiB: the
    # actors take batches one by one (spread over the pool, streamed, a dead actor's batch redone alone)
    context.target_max_block_size = 1
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    # Ray Data's console log (its tuning warnings, a failure's stack) would go to stderr beside our
    # one-line summary and errors; a failure reaches us as an exception, said in one line, and the
    # whole log stays in the session's ray-data.log
    for handler in logging.getLogger("ray.data").handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            handler.setLevel(logging.CRITICAL + 1)


def keep_stdout_for_records() -> None:
    """Send what Ray prints on the driver to stderr. Ray prints the raylet's notices (such as "Task ...
    failed ... will be retried" when an actor dies) on stdout (``listen_error_messages`` in
    ``ray._private.worker``), which is our JSONL output; there is no option to move them."""
    from ray._private import worker

    print_to_stdstream = worker.print_to_stdstream
    if getattr(print_to_stdstream, "to_stderr", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        print_to_stdstream({**data, "is_err": True}, ignore_prefix)

    to_stderr.to_stderr = True  # type: ignore[attr-defined]  # marks the wrapper: installed once
    worker.print_to_stdstream = to_stderr
