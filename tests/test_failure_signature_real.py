"""Failure signatures on the REAL output of the tools installed here: the same failure met twice (another
directory, other file names and line numbers, another run's timing) signs alike; another failure of the same
tool signs apart. The error text is built as Claude Code gives a failed Bash call's: `Exit code N` and the
command's output."""

import os
import subprocess
import sys

from claude_mem.capture.failure_signature import signature
from conftest import require_executable


def failed(command: list[str], cwd: str, env: dict | None = None) -> dict:
    """Run `command` in `cwd`; its signature as the post-tool hook would compute it (it must fail)."""
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "LC_ALL": "C", "NO_COLOR": "1", **(env or {})})
    assert result.returncode != 0, result.stdout + result.stderr
    sig = signature("Bash", {"command": " ".join(command)}, f"Exit code {result.returncode}\n{result.stderr}{result.stdout}")
    assert sig is not None
    return sig


def write(path: str, text: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def place(tmp_path, name: str) -> str:
    path = tmp_path / name
    path.mkdir(parents=True)
    return str(path)


def assert_recurs_and_differs(first: dict, again: dict, other: dict) -> None:
    assert first["error"] == again["error"], (first["error_norm"], again["error_norm"])
    assert first["error"] != other["error"], (first["error_norm"], other["error_norm"])
    assert first["error_text"]


def test_pytest_missing_module(tmp_path):
    def run(where, test, blank_lines, module):
        root = place(tmp_path, where)
        write(os.path.join(root, "tests", f"{test}.py"), "\n" * blank_lines + f"import {module}\n\ndef test_x():\n    pass\n")
        return failed([sys.executable, "-m", "pytest", "-x", "-p", "no:cacheprovider", "tests"], root)

    assert_recurs_and_differs(run("a/proj", "test_api", 0, "requests_missing_here"),
                              run("b/wt-91f2/proj", "test_users", 7, "requests_missing_here"),
                              run("c/proj", "test_api", 0, "yaml_missing_here"))


def test_pytest_assertion_in_one_test_and_in_another(tmp_path):
    def run(where, name, got):
        root = place(tmp_path, where)
        write(os.path.join(root, "test_it.py"), f"def helper():\n    return {got}\n\n\ndef {name}():\n"
              f"    assert helper() == 4\n")
        return failed([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_it.py"], root)

    assert_recurs_and_differs(run("a", "test_total", 3), run("b/c", "test_total", 5), run("d", "test_count", 3))


def test_python_type_error_in_a_function(tmp_path):
    def run(where, function, padding):
        root = place(tmp_path, where)
        write(os.path.join(root, "app", "api.py"), "\n" * padding + f"def {function}(user):\n    return user['id']\n")
        write(os.path.join(root, "main.py"), f"from app.api import {function}\n{function}(None)\n")
        return failed([sys.executable, "main.py"], root)

    assert_recurs_and_differs(run("a", "create_user", 0), run("b/x", "create_user", 40), run("c", "delete_user", 0))


def test_gcc_missing_header_through_make(tmp_path):
    require_executable("make")
    require_executable("cc")

    def run(where, header, padding):
        root = place(tmp_path, where)
        write(os.path.join(root, "src", "tls.c"), "\n" * padding + f"#include <{header}>\nint main(void) {{ return 0; }}\n")
        write(os.path.join(root, "Makefile"), "build/tls.o: src/tls.c\n\tmkdir -p build\n\tcc -c src/tls.c -o build/tls.o\n")
        return failed(["make"], root)

    assert_recurs_and_differs(run("a", "no_such_ssl/ssl.h", 0), run("b/y", "no_such_ssl/ssl.h", 12),
                              run("c", "no_such_zlib.h", 0))


def test_node_cannot_find_module(tmp_path):
    require_executable("node")

    def run(where, module, padding):
        root = place(tmp_path, where)
        write(os.path.join(root, "scripts", "seed.js"), "\n" * padding + f"require('{module}');\n")
        return failed(["node", "scripts/seed.js"], root)

    assert_recurs_and_differs(run("a", "pg-missing-here", 0), run("b/z", "pg-missing-here", 9),
                              run("c", "dotenv-missing-here", 0))


def test_git_failures(tmp_path):
    git = require_executable("git")

    def repo(where):
        root = place(tmp_path, where)
        subprocess.run([git, "init", "-q", "-b", "main"], cwd=root, check=True)
        return root

    first = failed([git, "checkout", "release"], repo("a"))
    again = failed([git, "checkout", "release"], repo("b/v"))
    other = failed([git, "push", os.path.join(str(tmp_path), "nowhere", "remote.git"), "main"], repo("c"))
    assert_recurs_and_differs(first, again, other)


def test_psql_connection_refused(tmp_path):
    psql = require_executable("psql")
    first = failed([psql, "-h", "127.0.0.1", "-p", "9", "-U", "app", "-d", "app", "-c", "select 1"], str(tmp_path))
    again = failed([psql, "-h", "127.0.0.1", "-p", "9", "-U", "app", "-d", "app", "-c", "select 2"], str(tmp_path))
    other = failed([psql, "-h", "127.0.0.1", "-p", "9", "-U", "app", "-d", "app", "-c", "select 1"], str(tmp_path),
                   {"PGCONNECT_TIMEOUT": "x"})
    assert first["error"] == again["error"] and first["command"] == again["command"]
    assert "Connection refused" in first["error_text"] or "connection" in first["error_text"].lower()
    assert other["error_text"]
