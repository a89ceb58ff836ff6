"""Plain text: one document per non-blank line; ``ID<TAB>text`` gives the document its id,
otherwise the id is the line number."""

from bioc import BioCDocument, BioCPassage

from toolbox.io import display_name, open_input_lines


def read_text(path, problems):
    name = display_name(path)
    with open_input_lines(path) as lines:
        for number, raw in enumerate(lines, 1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                problems.report(f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})",
                                name, number)
                continue
            if not line.strip():
                continue
            doc_id, tab, text = line.partition("\t")
            if not tab or not doc_id.strip() or " " in doc_id.strip():
                doc_id, text = str(number), line
            document = BioCDocument()
            document.id = doc_id.strip()
            passage = BioCPassage()
            passage.offset = 0
            passage.text = text
            document.add_passage(passage)
            document.source = (name, number)
            yield document
