"""The harness's two edges hold apart by closure: what a module reaches through every chain of imports.

Invariants:
- No module of harness/serve (the MCP server) reaches a module of harness/cli (the command line), and no module of
  harness/cli reaches one of harness/serve: both resolve their settings below them (`harness.resolve`), and they
  meet only in `harness.program`, which adds the `serve` command to the command line's groups.
- The input readers every layer shares (PRIMITIVES: settings, errors, strict_json, strict_yaml, typed_inputs,
  durable) reach nothing of the harness but each other: a rule of Hermes (its profile names) is the Hermes
  layer's, typed there with the primitives' tools, never imported by them.

A module depends on what it imports, wherever the import stands (a function's lazy import counts), on each parent
package of what it imports (importing `a.b.c` runs `a/__init__` and `a/b/__init__`), on its own parents, and on
every module it names in a string (`importlib.import_module(name)`, the CLI's COMMAND_MODULES). The graph is read
from the sources, so an import that crosses the seam, however far down a chain, fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

from graph_support import shortest_chains

PACKAGE = Path(__file__).resolve().parents[2] / "harness"


class Modules:
    """The modules of a package tree and the modules of that tree each one depends on directly."""

    def __init__(self, root: Path) -> None:
        self.direct: dict[str, set[str]] = {}
        paths = {self._name(root, path): path for path in sorted(root.rglob("*.py"))}
        for name, path in paths.items():
            named = self._named(ast.parse(path.read_text(encoding="utf-8")), name, path.name == "__init__.py")
            closed = {prefix for module in named for prefix in _prefixes(module)} | set(_prefixes(name)[:-1])
            self.direct[name] = closed & set(paths) - {name}

    @staticmethod
    def _name(root: Path, path: Path) -> str:
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    @staticmethod
    def _named(tree: ast.AST, module: str, is_package: bool) -> set[str]:
        named: set[str] = set()
        package = module if is_package else module.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                named.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                named.add(base)
                named.update(f"{base}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value \
                    and node.value.replace(".", "_").isidentifier():  # a dotted name: a module imported by name
                named.add(node.value)
        return named

    def in_package(self, package: str) -> set[str]:
        return {name for name in self.direct if name == package or name.startswith(package + ".")}

    def chains(self, sources: set[str], targets: set[str]) -> list[str]:
        """A shortest chain from each source to each target it reaches, spelled `a -> b -> c`."""
        return [" -> ".join(chain) for start in sorted(sources) for chain in shortest_chains(self.direct, start, targets)]


def _prefixes(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:depth]) for depth in range(1, len(parts) + 1)]


MODULES = Modules(PACKAGE)
CLI, SERVE = MODULES.in_package("harness.cli"), MODULES.in_package("harness.serve")
PRIMITIVES = {f"harness.{name}" for name in ("settings", "errors", "strict_json", "strict_yaml", "typed_inputs",
                                             "durable")}


def write_tree(root: Path, files: dict[str, str]) -> Modules:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return Modules(root)


def test_the_closure_follows_lazy_relative_and_named_imports_and_parents(tmp_path: Path) -> None:
    """Each way an import hides is found: inside a function, relative, a submodule by `from`, a name in a string,
    a package's `__init__`."""
    modules = write_tree(tmp_path / "pkg", {
        "__init__.py": "", "edge/__init__.py": "", "edge/wire.py": "",
        "a/__init__.py": "", "a/lazy.py": "def f():\n    import pkg.edge.wire\n",
        "a/relative.py": "from ..edge import wire\n", "a/named.py": "GROUPS = ('pkg.edge.wire',)\n",
        "a/through.py": "from pkg.a import lazy\n", "a/alone.py": "import os\n",
        "b/__init__.py": "import pkg.edge.wire\n", "b/child.py": "",
    })
    assert modules.chains(modules.in_package("pkg.a") | modules.in_package("pkg.b"), {"pkg.edge.wire"}) == [
        "pkg.a.lazy -> pkg.edge.wire", "pkg.a.named -> pkg.edge.wire", "pkg.a.relative -> pkg.edge.wire",
        "pkg.a.through -> pkg.a.lazy -> pkg.edge.wire", "pkg.b -> pkg.edge.wire",
        "pkg.b.child -> pkg.b -> pkg.edge.wire"]


def test_the_packages_are_where_the_test_looks() -> None:
    assert {"harness.cli", "harness.cli.autobot_commands", "harness.cli.hermes_options"} <= CLI
    assert {"harness.serve", "harness.serve.tools", "harness.serve.server", "harness.serve.results"} <= SERVE


def test_no_module_of_serve_reaches_the_command_line() -> None:
    assert MODULES.chains(SERVE, CLI) == []


def test_no_module_of_the_command_line_reaches_serve() -> None:
    assert MODULES.chains(CLI, SERVE) == []


def test_the_edges_meet_in_the_program_alone() -> None:
    """The program reaches both (the test above is not passing for want of an edge), and nothing else of the
    harness reaches the program."""
    reached = " ".join(MODULES.chains({"harness.program"}, CLI | SERVE))
    assert "harness.cli.converge_commands" in reached and "harness.serve.server" in reached
    others = set(MODULES.direct) - {"harness.program", "harness.__main__"}
    assert MODULES.chains(others, {"harness.program"}) == []


def test_the_shared_readers_reach_nothing_but_each_other() -> None:
    """`harness` itself (the package's `__init__`) re-exports errors alone, so it is no way out either."""
    assert set(MODULES.direct) >= PRIMITIVES
    assert MODULES.chains(PRIMITIVES, set(MODULES.direct) - PRIMITIVES - {"harness"}) == []
    assert MODULES.direct["harness"] <= PRIMITIVES
