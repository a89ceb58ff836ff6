"""The in-process engine: batches one after another in this process."""

from ontolink.engines import ENGINES, Engine


@ENGINES.register("local")
class LocalEngine(Engine):
    in_process = True

    def map(self, function, batches):
        for batch in batches:
            yield function(batch)
