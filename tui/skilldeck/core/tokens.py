"""A fast, dependency-free token estimate used for caps and display.

No tokenizer is loaded: the estimate is ``ceil(max(chars / 4, words * 1.3))``.

* ``chars / 4`` is the usual rule of thumb for English prose with BPE tokenizers.
* ``words * 1.3`` keeps short-word and punctuation-heavy text (code, tables, lists of
  identifiers) from being underestimated.

Taking the larger of the two errs on the side of caution: a cap expressed in estimated
tokens is never much looser than the same cap in real tokens.
"""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 4.0
TOKENS_PER_WORD = 1.3


def estimate_tokens(text: str) -> int:
    """Approximate number of model tokens in ``text``.

    Args:
        text: Any string.

    Returns:
        ``ceil(max(len(text) / 4, word_count * 1.3))``; 0 for the empty string.
    """
    if not text:
        return 0
    words = len(text.split())
    return math.ceil(max(len(text) / CHARS_PER_TOKEN, words * TOKENS_PER_WORD))
