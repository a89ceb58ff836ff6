"""The Ray engine: batches go to a pool of Ray actors, each loading the step's index or model once.

The driver reads and validates the input (so a bad record is the same FILE:LINE
error as locally, after the results of every batch before it), sends batches to
the actors in turn and yields their results in input order, keeping at most two
batches per actor in flight (bounded memory). An actor that dies is restarted
by Ray and its batches redone (``max_restarts``, ``max_task_retries``); a
batch's result does not depend on which actor or attempt computed it.
"""

import logging
import os
from collections import deque

from toolbox.backends.engines import ENGINES, Engine
from toolbox.errors import OntolinkError

IN_FLIGHT_PER_WORKER = 2
RESTARTS = 3  # per actor; a batch that kills its actor this often is a bug, not bad luck


def import_ray():
    try:
        import ray
    except ImportError:
        raise OntolinkError("--engine ray needs Ray: pip install 'ontolink[ray]'") from None
    return ray


class BatchWorker:
    """A Ray actor's body: holds the step's function (loaded on its first batch) and runs batches."""

    def __init__(self, function):
        self.function = function

    def run(self, batch):
        return self.function(batch)


@ENGINES.register("ray")
class RayEngine(Engine):
    """Joins the cluster at ``address`` (``auto``: the running one; also ``RAY_ADDRESS``), or starts
    a local one with ``workers`` CPUs and shuts it down on close (also after Ctrl-C). Where Ray is
    already initialised in this process (a library caller, the tests), its actors are used and killed
    on close."""

    def __init__(self, workers=1, address=None, device="auto"):
        super().__init__(workers=workers, address=address, device=device)
        ray = import_ray()
        self.connected = False  # True: this engine called ray.init, so close() disconnects
        if not ray.is_initialized():
            self.connected = True
            address = address or os.environ.get("RAY_ADDRESS")
            # log_to_driver off: Ray prints workers' stdout on the driver's stdout, which is our JSONL
            # output; a worker's exception still reaches us through the task (its logs stay under
            # /tmp/ray/session_latest/logs)
            options = {"logging_level": logging.WARNING, "include_dashboard": False, "log_to_driver": False}
            if address:
                try:
                    ray.init(address=address, **options)
                except ConnectionError as error:
                    raise OntolinkError(f"cannot join the Ray cluster at {address}: {error}") from None
            else:
                ray.init(num_cpus=workers, **options)
        self.actors = []
        self._pickled_function = None

    def _gpus_per_worker(self):
        import ray

        if self.device == "cpu" or not str(self.device).startswith(("auto", "cuda")):
            return 0
        return 1 if ray.cluster_resources().get("GPU", 0) >= 1 else 0

    def _start_actors(self, function):
        """Actors for ``function``; a map with the same function as the last one (the next input shard)
        keeps its actors and what they loaded."""
        import ray
        from ray import cloudpickle

        pickled = cloudpickle.dumps(function)
        if self.actors and pickled == self._pickled_function:
            return
        for actor in self.actors:
            ray.kill(actor, no_restart=True)
        self._pickled_function = pickled

        options = {"num_cpus": 1, "num_gpus": self._gpus_per_worker(), "max_restarts": RESTARTS,
                   "max_task_retries": RESTARTS}
        # the driver's ontolink settings (ONTOLINK_CACHE_DIR: exported models, converted LLMs) hold in
        # the actors too, also on a cluster started before they were set
        settings = {name: value for name, value in os.environ.items() if name.startswith("ONTOLINK_")}
        if settings:
            options["runtime_env"] = {"env_vars": settings}
        actor = ray.remote(BatchWorker).options(**options)
        self.actors = [actor.remote(function) for _ in range(self.workers)]

    def _result(self, pending):
        import ray

        try:
            return ray.get(pending.popleft())
        except ray.exceptions.RayTaskError as error:
            raise error.as_instanceof_cause() from None  # the step's own exception (InputError, ...)
        except ray.exceptions.RayActorError as error:
            raise OntolinkError(f"a Ray worker died {RESTARTS + 1} times on one batch ({str(error).splitlines()[0]}); "
                                "its logs are in the cluster's session logs (/tmp/ray/session_latest/logs)") from None

    def map(self, function, batches):
        self._start_actors(function)
        pending = deque()
        failed = None
        batches = iter(batches)
        submitted = 0
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except Exception as error:  # a bad record: the batches before it are still written
                failed = error
                break
            pending.append(self.actors[submitted % len(self.actors)].run.remote(batch))
            submitted += 1
            while len(pending) >= IN_FLIGHT_PER_WORKER * len(self.actors):
                yield self._result(pending)
        while pending:
            yield self._result(pending)
        if failed is not None:
            raise failed

    def close(self):
        import ray

        if self.connected:
            # disconnecting ends the actors this driver owns (and a cluster it started) without
            # killing each first: Ray reports a kill with batches in flight on stdout, our output
            ray.shutdown()
            self.connected = False
        elif ray.is_initialized():
            for actor in self.actors:
                ray.kill(actor, no_restart=True)
        self.actors = []
