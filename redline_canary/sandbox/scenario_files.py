"""Reading scenario files: YAML or JSON decoded strictly (a key given twice is an error, where
PyYAML and ``json`` would silently keep the last), then handed to ``scenario_validation``; and
``as_scenario``, which takes a Scenario, a decoded mapping or a path. It is separate from the
validation because decoding is about the file's syntax and the validation about the decoded data's
shape, and ``parse_scenario`` serves callers that never had a file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from redline_canary.sandbox.scenario import Scenario, ScenarioError
from redline_canary.sandbox.scenario_validation import parse_scenario


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice, which PyYAML would silently overwrite."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} given twice", key_node.start_mark
            )
        seen.add(key)
    return dict(loader.construct_mapping(node, deep=deep))


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a YAML (``.yaml``/``.yml``/other) or JSON (``.json``) scenario."""
    p = Path(path)
    source = str(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{source}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(text, object_pairs_hook=_unique_json_object)
        else:
            data = yaml.load(text, Loader=_UniqueKeyLoader)
    except RecursionError:
        raise ScenarioError(f"{source}: nested too deeply to be a scenario") from None
    except (ValueError, yaml.YAMLError) as exc:
        detail = " ".join(str(exc).split())
        kind = "JSON" if p.suffix.lower() == ".json" else "YAML"
        raise ScenarioError(f"{source}: not valid {kind}: {detail}") from exc
    return parse_scenario(data, source)


def _unique_json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"key {k!r} given twice")
        out[k] = v
    return out


def as_scenario(value: Scenario | Mapping[str, Any] | str | Path) -> Scenario:
    """A Scenario from itself, a decoded mapping, or a file path."""
    if isinstance(value, Scenario):
        return value
    if isinstance(value, (str, Path)):
        return load_scenario(value)
    return parse_scenario(dict(value))
