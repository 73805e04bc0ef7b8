"""The operator's settings (attn_ui.infra.settings; attn_models.Access.parse for the models' variables), as a careless
operator sets them: every value not understood gives the default (or is left out) with one log line naming the
variable and the value, no page raises for any of them, an operator's malformed repo id gets the message a visitor's
gets (never huggingface_hub's traceback), and a refusal lists only the repo ids a visitor may pick."""

from __future__ import annotations

import doctest
import logging

import pytest
from streamlit.testing.v1 import AppTest

import attn_models
from attn_models import Access
from attn_models.access import invalid_repo_id
from attn_ui.app import registry
from attn_ui.infra import budget, settings
from attn_ui.views import model_views

from .apptools import APP, plain

DEFAULT_CACHE = settings.CACHE_MB * 1_000_000
DEFAULT_DOWNLOAD = attn_models.access.DOWNLOAD_MB * 1_000_000
OPERATOR_MODELS = ["ATTN_MODEL", "ATTN_CAUSAL_MODEL", "ATTN_TRANSLATOR_MODEL"]
MALFORMED = ["a/b..c", "a--b/c", "a/b.git"]


@pytest.fixture(autouse=True)
def plain_operator(monkeypatch):
    """No ATTN_* variable but the test's, and the settings parsed afresh (so that each test sees its log lines)."""
    for name in settings.NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(settings, "_last", None)


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """No network and an empty Hugging Face cache (as tests/app/test_model_xlmr.py): a model page says so."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))


def said(caplog: pytest.LogCaptureFixture, name: str) -> list[str]:
    """The warnings logged that name the variable ``name``."""
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and r.getMessage().startswith((f"{name}=", f"{name} "))]


def test_the_doctests_of_the_settings_and_the_budget():
    for module in (settings, budget, attn_models.access):
        assert doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE).failed == 0


# ---- ATTN_CACHE_MB ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["inf", "1e400", "nan", "-5", "0", "abc", "-inf", "0.5", "2e6", "64 MB"])
def test_a_cache_size_not_understood_is_logged_once_and_the_default_used(value, caplog):
    with caplog.at_level(logging.WARNING):
        parsed = settings.parse({"ATTN_CACHE_MB": value})
    assert parsed.cache_bytes == DEFAULT_CACHE
    assert said(caplog, "ATTN_CACHE_MB") == [f"ATTN_CACHE_MB={value!r} is not a finite number of megabytes from 1 to "
                                             "1000000: using 256."]
    assert budget.limit_from_env({"ATTN_CACHE_MB": value}) == DEFAULT_CACHE


@pytest.mark.parametrize(("value", "kept"), [("64", 64_000_000), (" 1000 ", 1_000_000_000), ("0.5e3", 500_000_000),
                                              ("1", 1_000_000), ("1000000", 10**12), ("", DEFAULT_CACHE)])
def test_a_cache_size_understood_is_kept_without_a_word(value, kept, caplog):
    with caplog.at_level(logging.WARNING):
        assert settings.parse({"ATTN_CACHE_MB": value}).cache_bytes == kept
    assert not caplog.records


def test_the_servers_budget_follows_the_settings_parsed_once(monkeypatch, caplog):
    monkeypatch.setenv("ATTN_CACHE_MB", "64")
    assert budget.BUDGET.limit == budget.limit_from_env() == 64_000_000
    monkeypatch.setenv("ATTN_CACHE_MB", "inf")
    with caplog.at_level(logging.WARNING):
        first = settings.settings()
        assert budget.BUDGET.limit == DEFAULT_CACHE and model_views.access() is first.access
        assert settings.settings() is first  # not parsed again while nothing changed
    assert len(said(caplog, "ATTN_CACHE_MB")) == 1
    monkeypatch.setenv("ATTN_CACHE_MB", "100")
    assert settings.settings() is not first and budget.BUDGET.limit == 100_000_000


# ---- ATTN_DOWNLOAD_MB, ATTN_ALLOW_FOLDERS ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["inf", "1e400", "nan", "-5", "-inf", "abc", "1e8"])
def test_a_download_cap_not_understood_is_logged_once_and_the_default_used(value, caplog):
    with caplog.at_level(logging.WARNING):
        access = Access.from_env({"ATTN_DOWNLOAD_MB": value})
    assert access.download_bytes == DEFAULT_DOWNLOAD
    assert said(caplog, "ATTN_DOWNLOAD_MB") == [
        f"ATTN_DOWNLOAD_MB={value!r} is not a finite number of megabytes from 0 to 10000000: using 1000."]


@pytest.mark.parametrize(("value", "kept"), [("0", 0), ("250", 250_000_000), ("12.5", 12_500_000), (" ", 10**9)])
def test_a_download_cap_understood_is_kept_without_a_word(value, kept, caplog):
    with caplog.at_level(logging.WARNING):
        assert Access.from_env({"ATTN_DOWNLOAD_MB": value}).download_bytes == kept
    assert not caplog.records


@pytest.mark.parametrize(("value", "on", "logged"), [
    ("1", True, False), ("TRUE", True, False), ("Yes", True, False), (" on ", True, False),
    ("0", False, False), ("false", False, False), ("NO", False, False), ("off", False, False), ("", False, False),
    ("ture", False, True), ("2", False, True), ("enable", False, True),
])
def test_allow_folders_says_when_it_is_not_understood(value, on, logged, caplog):
    with caplog.at_level(logging.WARNING):
        assert Access.from_env({"ATTN_ALLOW_FOLDERS": value}).folders is on
    assert said(caplog, "ATTN_ALLOW_FOLDERS") == ([f"ATTN_ALLOW_FOLDERS={value.strip()!r} is not one of 1, true, yes, "
                                                   "on (allowed) or 0, false, no, off: folders stay off."]
                                                  if logged else [])


# ---- the operator's models -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", OPERATOR_MODELS)
@pytest.mark.parametrize("repo_id", MALFORMED)
def test_an_operators_malformed_repo_id_is_logged_and_refused_as_a_visitors(name, repo_id, caplog, monkeypatch):
    def no_hub(*_a, **_k):
        raise AssertionError("huggingface_hub was asked about a malformed repo id")

    monkeypatch.setattr("huggingface_hub.try_to_load_from_cache", no_hub)
    with caplog.at_level(logging.WARNING):
        access = Access.from_env({name: repo_id})
    assert said(caplog, name) == [f"{name}={repo_id!r} is neither a folder on this machine nor a valid Hugging Face "
                                  "repo id: the page that reads it refuses it with a message."]
    assert access.is_operators(repo_id)
    for load in (access.check, lambda s: attn_models.load(s, access=access),
                 lambda s: attn_models.load(s, access=access, local_only=True)):
        with pytest.raises(attn_models.ModelError) as err:
            load(repo_id)
        assert str(err.value) == str(invalid_repo_id(repo_id)) == str(pytest.raises(
            attn_models.ModelError, Access(folders=False).check, repo_id).value)  # a visitor's gets the same


def test_an_operators_folder_and_good_ids_are_kept_without_a_word(tmp_path, caplog):
    env = {"ATTN_MODEL": str(tmp_path), "ATTN_CAUSAL_MODEL": "me/gpt", "ATTN_TRANSLATOR_MODEL": " me/t5 "}
    with caplog.at_level(logging.WARNING):
        access = Access.from_env(env)
        parsed = settings.parse(env)
    assert not caplog.records
    assert [access.check(s) for s in (str(tmp_path), "me/gpt", "me/t5")] == [str(tmp_path), "me/gpt", "me/t5"]
    assert (parsed.default_model("ko"), parsed.causal_model, parsed.translator_model) == (str(tmp_path), "me/gpt",
                                                                                          "me/t5")


def test_attn_models_garbage_is_left_out_and_the_refusal_names_only_repo_ids(tmp_path, caplog):
    folder = tmp_path / "private-bert"
    folder.mkdir()
    env = {"ATTN_MODELS": f"a/b, not an id, ../x, {folder}, c/d..e, e/f, /nonexistent", "ATTN_MODEL": str(folder),
           "ATTN_CAUSAL_MODEL": "g--h/i"}
    with caplog.at_level(logging.WARNING):
        access = Access.from_env(env)
    assert said(caplog, "ATTN_MODELS") == [
        f"ATTN_MODELS lists {s!r}, neither a valid Hugging Face repo id nor a folder on this machine: left out."
        for s in ("not an id", "../x", "c/d..e", "/nonexistent")]
    assert len(said(caplog, "ATTN_CAUSAL_MODEL")) == 1
    assert str(folder) in access.repos  # the operator's folder stays allowed …
    offered = sorted([*attn_models.access.DEFAULTS, "a/b", "e/f"])
    assert access.offered == tuple(offered)  # … and is never shown, nor any name that is no repo id
    with pytest.raises(attn_models.ModelError) as err:
        access.check("x/y")
    assert str(err.value) == f"'x/y' is not one of the models this server offers: {', '.join(offered)}."
    assert str(tmp_path) not in str(err.value) and "g--h" not in str(err.value)


# ---- the pages ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "value"), [
    ("ATTN_CACHE_MB", "inf"), ("ATTN_CACHE_MB", "1e400"), ("ATTN_CACHE_MB", "nan"), ("ATTN_CACHE_MB", "-5"),
    ("ATTN_DOWNLOAD_MB", "inf"), ("ATTN_DOWNLOAD_MB", "nan"),
])
def test_every_page_runs_whatever_the_operator_set(name, value, offline, monkeypatch, caplog):
    monkeypatch.setenv(name, value)
    with caplog.at_level(logging.WARNING):
        at = AppTest.from_file(APP, default_timeout=60).run()
        assert not at.exception, at.exception
        for page in registry.PAGES:
            at.switch_page(page.file).run()
            assert not at.exception, (page.name, at.exception)
            assert at.title[0].value.startswith(page.page_heading)
    assert len(said(caplog, name)) == 1  # parsed once for all the pages


@pytest.mark.parametrize(("name", "page", "repo_id"), [
    ("ATTN_MODEL", registry.MODEL, "a/b..c"),
    ("ATTN_CAUSAL_MODEL", registry.GENERATE, "a--b/c"),
    ("ATTN_TRANSLATOR_MODEL", registry.TRANSLATE, "a/b.git"),
])
def test_an_operators_malformed_repo_id_is_a_clean_message_on_its_page(name, page, repo_id, offline, monkeypatch):
    monkeypatch.setenv(name, repo_id)
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(page.file).run()
    assert not at.exception, at.exception
    errors = [plain(e.value) for e in at.error]
    assert errors == [str(invalid_repo_id(repo_id))], errors
    assert "Cannot have" not in plain("\n".join(str(m.value) for m in [*at.markdown, *at.error, *at.warning]))


def test_the_model_page_offers_only_repo_ids(tmp_path, offline, monkeypatch):
    folder = tmp_path / "private-bert"
    folder.mkdir()
    monkeypatch.setenv("ATTN_MODELS", f"a/b, {folder}, ../x, c/d..e")
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(registry.MODEL.file).run()
    assert not at.exception
    box = at.text_input(key="model_other")
    assert "This server offers: a/b, distilbert/distilgpt2" in plain(box.help)
    assert str(folder) not in plain(box.help) and "../x" not in box.help and "c/d" not in box.help
