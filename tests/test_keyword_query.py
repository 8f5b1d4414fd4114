"""Keyword queries for natural language (DESIGN §6, issue 12): the distinct content words of a
question, without stop-words and question words; phrases and prefixes keep their meaning."""

from claude_mem.index import fts


def test_a_question_keeps_only_its_content_words():
    assert fts.keyword_expression("What kind of database did we choose, and why did we choose it?") == \
        '"database" OR "choose"'


def test_phrases_prefixes_and_case_are_kept_and_terms_are_distinct():
    assert fts.keyword_expression('How did "lease expired" errors start? pars* Parser parser') == \
        '- {context} : "lease expired" OR "errors" OR "start" OR "pars"* OR "Parser"'  # a phrase: the row's own text


def test_a_query_of_only_common_words_still_searches():
    assert fts.keyword_expression("who is it") == '"who" OR "is" OR "it"'
    assert fts.keyword_expression("?!") == ""
