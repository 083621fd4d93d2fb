"""The engine's tokenizer (engine/data/tokenizer.cpp) in Python, so that the reference script
builds the same vocabulary and the same token ids as the engine.

Text is handled as latin-1 strings: one character per byte, so multibyte UTF-8 sequences are
seen byte by byte exactly as the C++ scanner sees them, and words compare equal to GloVe words
decoded the same way.
"""

SPACE, SKIP, WORD, APOSTROPHE, SIGN = range(5)
CLITICS = ("s", "re", "ve", "ll", "d", "m")


def _lower(text):
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


def _is_ascii_alnum(c):
    return "a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9"


def _general_punctuation(third):
    # U+2000..U+203F: spaces, dashes, curly quotes, the ellipsis.
    if third <= 0x8B:
        return SPACE, 3, None
    return {0x98: (SIGN, 3, "'"), 0x99: (APOSTROPHE, 3, None), 0x9C: (SIGN, 3, '"'),
            0x9D: (SIGN, 3, '"'), 0xA6: (SIGN, 3, "...")}.get(third, (SIGN, 3, None))


def _classify(text, i):
    """(kind, length in bytes, spelling or None) of the unit starting at i."""
    c = ord(text[i])
    if c == 0x20 or 0x09 <= c <= 0x0D:
        return SPACE, 1, None
    if c < 0x20 or c == 0x7F:
        return SKIP, 1, None
    if _is_ascii_alnum(text[i]):
        return WORD, 1, None
    if c == 0x27:
        return APOSTROPHE, 1, None
    if c < 0x80:
        return SIGN, 1, None
    if c == 0xE2 and i + 2 < len(text) and ord(text[i + 1]) == 0x80:
        return _general_punctuation(ord(text[i + 2]))
    if c == 0xC2 and i + 1 < len(text) and ord(text[i + 1]) == 0xA0:
        return SPACE, 2, None  # no-break space
    return WORD, 1, None  # other non-ASCII bytes belong to words


class _Scanner:
    def __init__(self, text, cased):
        self.text = text
        self.cased = cased
        self.out = []

    def emit(self, token):
        if token:
            self.out.append(token)

    def fold(self, text):
        return text if self.cased else _lower(text)

    def word_run(self, i):
        end = i
        while end < len(self.text) and _classify(self.text, end)[0] == WORD:
            end += 1
        return self.text[i:end]

    def run(self):
        i = 0
        while i < len(self.text):
            kind, length, spelling = _classify(self.text, i)
            if kind in (SPACE, SKIP):
                i += length
            elif kind == WORD:
                i = self.word(i)
            elif kind == APOSTROPHE:
                i = self.apostrophe(i, length)
            else:
                i = self.sign(i, length, spelling)
        return self.out

    def word(self, i):
        text = self.text
        token = ""
        while True:
            run = self.word_run(i)
            token += self.fold(run)
            i += len(run)
            if (i + 1 < len(text) and text[i] in ".," and "0" <= token[-1] <= "9"
                    and "0" <= text[i + 1] <= "9"):
                token += text[i]  # 1,000 and 3.14 stay whole
                i += 1
                continue
            if i >= len(text) or _classify(text, i)[0] != APOSTROPHE:
                break
            after = i + _classify(text, i)[1]
            suffix = self.word_run(after)
            if not suffix:
                break  # a closing quote
            if _lower(suffix) == "t" and _lower(token[-1]) == "n":
                self.emit(token[:-1])
                self.emit(token[-1] + "'" + self.fold(suffix))
                return after + len(suffix)
            if _lower(suffix) in CLITICS:
                self.emit(token)
                self.emit("'" + self.fold(suffix))
                return after + len(suffix)
            token += "'"  # o'clock: one word
            i = after
        self.emit(token)
        return i

    def apostrophe(self, i, length):
        text = self.text
        after = i + length
        if after < len(text) and text[i] == "'" and text[after] == "'":
            self.emit("''")
            return after + 1
        suffix = self.word_run(after)
        if _lower(suffix) in CLITICS:
            self.emit("'" + self.fold(suffix))
            return after + len(suffix)
        self.emit("'")
        return after

    def sign(self, i, length, spelling):
        text = self.text
        c = text[i]
        end = i
        while end < len(text) and text[end] == c:
            end += 1
        if c == "." and end - i >= 3:
            self.emit("...")
            return end
        if c in "-`" and end - i >= 2:
            self.emit(c * 2)
            return end
        self.emit(spelling if spelling is not None else text[i:i + length])
        return i + length


def tokenize(text, cased=False):
    """Tokens of `text` (a latin-1 decoded byte string), as the engine writes them."""
    return _Scanner(text, cased).run()
