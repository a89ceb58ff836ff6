"""How mentions and entities are written as encoder inputs (docs/methods.md: the retriever and the reranker).

A fine-tuned retriever or reranker reads ``left [Ms] mention [Me] right`` and
``name [ENT] definition``; a frozen sentence encoder, and a retriever trained
with ``--input-mode bare``, read the bare strings (mention, name).
"""

MENTION_START, MENTION_END, ENTITY_SEPARATOR = "[Ms]", "[Me]", "[ENT]"
SPECIAL_TOKENS = [MENTION_START, MENTION_END, ENTITY_SEPARATOR]
# context: marked-up context and definitions; bare: the strings a frozen encoder reads
INPUT_MODES = ("context", "bare")
# Characters of context kept on each side: about 50 word pieces each, so the
# mention stays inside a 128-token input.
CONTEXT_CHARACTERS = 250


def mention_input(record, context_characters=CONTEXT_CHARACTERS):
    left = " ".join(record.get("context_left", "")[-context_characters:].split()[-context_characters:])
    right = " ".join(record.get("context_right", "")[:context_characters].split())
    return f"{left} {MENTION_START} {record['mention'].strip()} {MENTION_END} {right}".strip()


def entity_input(name, definition):
    return f"{name} {ENTITY_SEPARATOR} {definition or ''}".strip()


def span_pool(token_embeddings, input_ids, attention_mask, tokenizer):
    """Mean of the token vectors of the marked span: between [Ms] and [Me] in a mention input, the
    name (between [CLS] and [ENT]) in an entity input, every token otherwise. The context still
    shapes those vectors through attention, and an untrained backbone starts from vectors of the same
    tokens a frozen encoder reads, not from a mean over markers, context and definition."""
    import torch

    start_id, end_id, entity_id = tokenizer.convert_tokens_to_ids(SPECIAL_TOKENS)
    attended = attention_mask.bool()
    position = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
    length = attended.sum(dim=1, keepdim=True)

    def first(token_id):
        found = input_ids == token_id
        return torch.where(found.any(dim=1, keepdim=True), found.int().argmax(dim=1, keepdim=True), length)

    start, end, separator = first(start_id), first(end_id), first(entity_id)
    is_mention = start < length
    is_entity = ~is_mention & (separator < length)
    mask = torch.where(is_mention, (position > start) & (position < end),
                       torch.where(is_entity, (position > 0) & (position < separator), attended)) & attended
    mask = torch.where(mask.any(dim=1, keepdim=True), mask, attended)  # an empty span: the whole input
    weights = mask.unsqueeze(-1).to(token_embeddings.dtype)
    return (token_embeddings * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1)


def pooled(output, features, tokenizer, pooling):
    """A sentence-transformers forward ``output`` as one vector per input: ``span`` (see ``span_pool``)
    or the model's own pooling (``mean``)."""
    if pooling != "span":
        return output["sentence_embedding"]
    return span_pool(output["token_embeddings"], features["input_ids"], features["attention_mask"], tokenizer)
