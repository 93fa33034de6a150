"""gopher repetition's --annotate signals restated with datatrove 0.10.1's own
helpers (as its GopherRepetitionFilter computes them, every check run), for
make_rules_fixtures.py and make_longwords_fixture.py."""
import re

from datatrove.pipeline.filters.gopher_repetition_filter import (find_all_duplicate, find_duplicates,
                                                                 find_top_duplicate, get_n_grams)
from datatrove.utils.text import split_into_words


def gr_signals(text):
    s = {k: None for k in ["gopher_dup_para_frac", "gopher_dup_para_char_frac", "gopher_dup_line_frac", "gopher_dup_line_char_frac"]}
    for n in (2, 3, 4):
        s["gopher_top_%d_gram_char_frac" % n] = None
    for n in range(5, 11):
        s["gopher_dup_%d_gram_char_frac" % n] = None
    if not text:
        s["gopher_repetition_reason"] = "empty"
        return s
    checks = []
    paras = re.split(r"\n{2,}", text.strip())
    d, c = find_duplicates(paras)
    s["gopher_dup_para_frac"], s["gopher_dup_para_char_frac"] = d / len(paras), c / len(text)
    checks += [(d / len(paras) > 0.3, "dup_para_frac"), (c / len(text) > 0.2, "dup_para_char_frac")]
    lines = re.split("\n+", text)
    d, c = find_duplicates(lines)
    s["gopher_dup_line_frac"], s["gopher_dup_line_char_frac"] = d / len(lines), c / len(text)
    checks += [(d / len(lines) > 0.3, "dup_line_frac"), (c / len(text) > 0.2, "dup_line_char_frac")]
    words = split_into_words(text, "en")
    for n, fr in ((2, 0.2), (3, 0.18), (4, 0.16)):
        ng = get_n_grams(words, n)
        if ng:
            v = find_top_duplicate(ng) / len(text)
            s["gopher_top_%d_gram_char_frac" % n] = v
            checks.append((v > fr, "top_%d_gram" % n))
    for n, fr in ((5, 0.15), (6, 0.14), (7, 0.13), (8, 0.12), (9, 0.11), (10, 0.10)):
        v = find_all_duplicate(words, n) / len(text)
        s["gopher_dup_%d_gram_char_frac" % n] = v
        checks.append((v > fr, "duplicated_%d_n_grams" % n))
    s["gopher_repetition_reason"] = next((r for c, r in checks if c), None)
    return s
