"""The Ray engine: batches go through a Ray Data ``map_batches`` over an actor pool, each actor loading
the step's index or model once.

The driver reads and validates the input (so a bad record is the same FILE:LINE error as locally, after
the results of every batch before it) and hands Ray Data the step's batches a window at a time: one
dataset row per batch (pickled, so records come back exactly as they went, whatever their fields), one
block per row so the pool's actors take batches one by one, ``preserve_order`` so results are yielded
in input order as soon as they and all before them are done. A window is bounded (``WINDOW_BATCHES``,
``WINDOW_BYTES``) so memory stays bounded on endless input; each window is one Ray Data execution, whose
pool loads the step's function once per actor. An actor that dies is restarted by Ray and its batch
redone (``max_restarts``, ``max_task_retries``); a batch's result does not depend on which actor or
attempt computed it. An exception of the step's function travels back as that batch's result and is
raised in its place, after the results before it.
"""

import logging
import os
import pickle
import warnings

from toolbox.backends.engines import ENGINES, Engine
from toolbox.errors import OntolinkError

RESTARTS = 3  # per actor and per batch; a batch that kills its actor this often is a bug, not bad luck
# a window is one Ray Data execution (its actors load the index or model once): large enough that this
# load is a small share of the window's work, small enough to hold on the driver and in the object store
WINDOW_BATCHES = 512
WINDOW_BYTES = 64 * 2 ** 20


def import_ray():
    try:
        import ray
        import ray.data  # noqa: F401 (ray[data]: Ray Core alone lacks it)
    except ImportError:
        raise OntolinkError("--engine ray needs Ray Data: pip install 'ontolink[ray]'") from None
    return ray


def actor_resources(device, cluster_gpus):
    """What each actor of the pool asks the cluster for: one GPU where ``device`` allows CUDA (``auto``,
    ``cuda``, ``cuda:N``) and the cluster has one, else one CPU slot."""
    wants_gpu = str(device) == "auto" or str(device).startswith("cuda")
    if wants_gpu and cluster_gpus >= 1:
        return {"num_cpus": 1, "num_gpus": 1}
    return {"num_cpus": 1, "num_gpus": 0}


def windows(batches, max_batches=WINDOW_BATCHES, max_bytes=WINDOW_BYTES):
    """``(pickled batches, error)`` windows of an iterable of batches. An exception raised while reading
    (a bad record) ends the windows: it comes with the last one, after the batches read before it."""
    batches = iter(batches)
    while True:
        window, size, error = [], 0, None
        while len(window) < max_batches and size < max_bytes:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except Exception as raised:
                error = raised
                break
            window.append(pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL))
            size += len(window[-1])
        if window or error is not None:
            yield window, error
        if error is not None or len(window) < max_batches and size < max_bytes:
            return


class BatchRunner:
    """The Ray Data class UDF: holds the step's function (which loads its index or model on its first
    batch, once per actor) and maps a Ray Data batch of pickled batches to their pickled results, or to
    the pickled exception a batch raised."""

    def __init__(self, function):
        self.function = function

    def __call__(self, rows):
        import numpy as np

        results = []
        for pickled in rows["batch"]:
            try:
                outcome = (True, self.function(pickle.loads(pickled)))
            except Exception as error:  # raised on the driver in this batch's place
                outcome = (False, error)
            try:
                results.append(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
            except Exception:  # an exception that does not pickle
                results.append(pickle.dumps((False, RuntimeError(repr(outcome[1])))))
        return {"result": np.array(results, dtype=object)}


@ENGINES.register("ray")
class RayEngine(Engine):
    """Joins the cluster at ``address`` (``auto``: the running one; also ``RAY_ADDRESS``), or starts
    a local one with ``workers`` CPUs and shuts it down on close (also after Ctrl-C). Where Ray is
    already initialised in this process (a library caller, the tests), that cluster is used."""

    def __init__(self, workers=1, address=None, device="auto"):
        super().__init__(workers=workers, address=address, device=device)
        ray = import_ray()
        self.connected = False  # True: this engine called ray.init, so close() disconnects
        if not ray.is_initialized():
            self.connected = True
            address = address or os.environ.get("RAY_ADDRESS")
            # log_to_driver off: Ray prints workers' stdout on the driver's stdout, which is our JSONL
            # output; a worker's exception still reaches us through its batch (its logs stay under
            # /tmp/ray/session_latest/logs)
            options = {"logging_level": logging.WARNING, "include_dashboard": False, "log_to_driver": False}
            if address:
                try:
                    ray.init(address=address, **options)
                except ConnectionError as error:
                    raise OntolinkError(f"cannot join the Ray cluster at {address}: {error}") from None
            else:
                ray.init(num_cpus=workers, **options)
        configure_ray_data()
        keep_stdout_for_records()

    def map_options(self, batch_count):
        """``map_batches`` keywords for ``batch_count`` batches: the actor pool (no more actors than
        batches), each actor's resources, restarts and settings."""
        import ray

        options = {"compute": ray.data.ActorPoolStrategy(size=min(self.workers, batch_count)), "batch_size": 1,
                   "batch_format": "numpy", "zero_copy_batch": True,
                   **actor_resources(self.device, ray.cluster_resources().get("GPU", 0)),
                   "max_restarts": RESTARTS, "max_task_retries": RESTARTS}
        # the driver's ontolink settings (ONTOLINK_CACHE_DIR: exported models, converted LLMs) hold in
        # the actors too, also on a cluster started before they were set
        settings = {name: value for name, value in os.environ.items() if name.startswith("ONTOLINK_")}
        if settings:
            options["runtime_env"] = {"env_vars": settings}
        return options

    def map(self, function, batches):
        import ray

        for window, error in windows(batches):
            if window:
                dataset = ray.data.from_items([{"batch": pickled} for pickled in window],
                                              override_num_blocks=len(window))
                with warnings.catch_warnings():
                    # Ray 2.60 warns of its extra remote args, yet names no parameter for max_restarts
                    # and max_task_retries (its default is to retry a dying batch forever)
                    warnings.simplefilter("ignore", DeprecationWarning)
                    results = dataset.map_batches(BatchRunner, fn_constructor_args=(function,),
                                                  **self.map_options(len(window)))
                try:
                    for row in results.iter_rows():
                        succeeded, result = pickle.loads(row["result"])
                        if not succeeded:
                            raise result
                        yield result
                except ray.exceptions.RayError as failure:  # the pool itself failed (restarts spent)
                    raise OntolinkError(f"the Ray workers failed ({str(failure).splitlines()[0]}); their logs "
                                        "are in the cluster's session logs (/tmp/ray/session_latest/logs)") from None
            if error is not None:  # a bad record: the batches before it are written
                raise error

    def close(self):
        import ray

        if self.connected:
            # disconnecting ends the actors this driver owns (and a cluster it started)
            ray.shutdown()
            self.connected = False


def configure_ray_data():
    """Results in input order; no Ray Data progress bars or execution logs (ours are on stderr)."""
    from ray.data import DataContext

    context = DataContext.get_current()
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    # Ray Data's warnings are about its own tuning (progress bars off, resources) and go to stderr
    # beside our one-line summary and errors; a failure still reaches us as an exception
    logging.getLogger("ray.data").setLevel(logging.ERROR)


def keep_stdout_for_records():
    """Send what Ray prints on the driver to stderr. Ray prints the raylet's notices (such as "Task ...
    failed ... will be retried" when an actor dies) on stdout (``listen_error_messages`` in
    ``ray._private.worker``), which is our JSONL output; there is no option to move them."""
    from ray._private import worker

    print_to_stdstream = worker.print_to_stdstream
    if getattr(print_to_stdstream, "to_stderr", False):
        return

    def to_stderr(data, ignore_prefix):
        print_to_stdstream({**data, "is_err": True}, ignore_prefix)

    to_stderr.to_stderr = True
    worker.print_to_stdstream = to_stderr
