import os
import subprocess

import pytest

from claude_mem import project
from conftest import require_executable


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@e"})


@pytest.fixture
def repo(tmp_path):
    require_executable("git")
    root = tmp_path / "work" / "app"
    (root / "src" / "deep").mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=root)
    (root / "README").write_text("x")
    git("add", ".", cwd=root)
    git("commit", "-q", "-m", "init", cwd=root)
    return root


def test_subdirectories_belong_to_the_repository(repo):
    assert project.project_root(str(repo / "src" / "deep")) == str(repo)
    assert project.project_root(str(repo)) == str(repo)


def test_stable_across_spellings(repo):
    assert project.project_root(str(repo / "src" / ".." / "src")) == str(repo)
    link = repo.parent / "link"
    link.symlink_to(repo)
    assert project.project_root(str(link / "src")) == str(repo)


def test_worktrees_share_their_repository_project(repo, tmp_path):
    worktree = tmp_path / "elsewhere" / "feature"
    git("worktree", "add", "-q", str(worktree), "-b", "feature", cwd=repo)
    assert (worktree / ".git").is_file()
    assert project.project_root(str(worktree)) == str(repo)
    (worktree / "sub").mkdir()
    assert project.project_root(str(worktree / "sub")) == str(repo)


def test_submodule_style_gitfile_is_its_own_project(tmp_path):
    checkout = tmp_path / "super" / "vendor" / "lib"
    checkout.mkdir(parents=True)
    modules = tmp_path / "super" / ".git" / "modules" / "lib"
    modules.mkdir(parents=True)
    (checkout / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    assert project.project_root(str(checkout)) == str(checkout)


def test_garbage_gitfile_does_not_crash(tmp_path):
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / ".git").write_bytes(b"\xff\xfe not a gitdir line")
    assert project.project_root(str(tmp_path / "odd")) == str(tmp_path / "odd")


def test_outside_git_the_directory_is_the_project(tmp_path):
    plain = tmp_path / "notes"
    plain.mkdir()
    assert project.project_root(str(plain)) == str(plain)


def test_claude_project_dir_wins_over_cwd(repo, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    assert project.identity(str(other), env={"CLAUDE_PROJECT_DIR": str(repo / "src")})[0] == str(repo)
    assert project.identity(str(other), env={})[0] == str(other)


def test_same_folder_name_gives_distinguishable_projects(tmp_path):
    one = tmp_path / "clients" / "acme" / "api"
    two = tmp_path / "personal" / "api"
    for path in (one, two):
        path.mkdir(parents=True)
        (path / ".git").mkdir()
    keys = [project.project_root(str(one)), project.project_root(str(two))]
    assert keys[0] != keys[1]
    names = project.display_names(keys)
    assert names[keys[0]] == "acme/api" and names[keys[1]] == "personal/api"
    assert project.display_names([keys[0]]) == {keys[0]: "api"}
    assert project.display_name(keys[1], keys) == "personal/api"


def test_display_names_for_nested_clashes_and_root():
    keys = ["/a/x/app", "/b/x/app", "/c/y/app", "/"]
    names = project.display_names(keys)
    assert len(set(names.values())) == len(keys)
    assert names["/c/y/app"] == "y/app"
    assert names["/a/x/app"] == "a/x/app"


def test_no_subprocess_is_started(repo, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("project identity must not start a process")

    monkeypatch.setattr(subprocess, "Popen", forbidden)
    monkeypatch.setattr(os, "system", forbidden)
    assert project.project_root(str(repo / "src")) == str(repo)
