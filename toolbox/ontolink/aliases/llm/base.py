"""The one interface every LLM backend implements."""

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

# gen-aliases --max-new-tokens, given here because aliases.options imports this package (GenAliasesOptions reads it)
DEFAULT_MAX_NEW_TOKENS = 64


@dataclass
class Completion:
    """One reply: its text, token counts (None when the backend cannot tell) and seconds spent on it.

    Batched backends share a batch's wall time equally among its completions.
    """

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float | None = None


class LLMBackend(ABC):
    """Chat completion with greedy decoding (temperature 0, as docs/methods.md's alias generation has it).

    Subclasses implement ``generate`` and say what they are in class attributes.
    ``describe()`` returns the decoding options: together with the backend name,
    ``model_id`` and the messages they make the response-cache key, so anything
    that changes a reply belongs there (and no secret does).
    """

    name = "base"
    #: conversations sent together by default (gen-aliases --batch-size)
    default_batch_size = 8
    #: one generate() call handles many conversations at once (batched decoding or concurrent requests)
    supports_batching = True
    #: runs the model in this process (False: a remote endpoint)
    local = True
    #: wants a CUDA device
    needs_gpu = False
    #: the model used when --model is not given (None: --model is required)
    default_model: str | None = None

    def __init__(self, model: str | None = None, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS) -> None:
        self.model = model or self.default_model
        self.max_new_tokens = max_new_tokens

    @property
    def model_id(self) -> str | None:
        """The model's identity in records and cache keys (None: a backend without a default model, given
        none)."""
        return self.model

    @abstractmethod
    def generate(self, conversations: Sequence[list[dict[str, str]]]) -> list[Completion]:
        """Complete each conversation (a list of {"role", "content"} messages); return a list of ``Completion``
        in the same order."""

    def stream(self, conversations: Sequence[list[dict[str, str]]]) -> Iterator[tuple[int, Completion]]:
        """Yield ``(index, Completion)`` as each completion is ready (here: all at the end of ``generate``);
        backends that finish requests one by one override this so each reply can be cached at once."""
        yield from enumerate(self.generate(conversations))

    def describe(self) -> dict[str, Any]:
        return {"temperature": 0, "max_new_tokens": self.max_new_tokens}

    def close(self) -> None:
        """Release the model or connections."""
