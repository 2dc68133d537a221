"""A configuration evalkit discovers is used only when nobody else could have written it."""

from __future__ import annotations

import grp
import os
import pwd
from pathlib import Path

import pytest
from evalkit.config import find_config, load_config
from evalkit.config_trust import UntrustedConfigError, untrusted_because
from evalkit.errors import ConfigError

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user (uid 65534) needs root")

CONFIG = '[providers.elsewhere]\nadapter = "openai"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "GITHUB_TOKEN"\n'


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private folder holding ``shared/evalkit.toml`` and an empty project ``shared/work``."""
    monkeypatch.delenv("EVALKIT_CONFIG", raising=False)
    monkeypatch.delenv("EVALKIT_TRUSTED_CONFIG_DIRS", raising=False)
    monkeypatch.delenv("SUDO_UID", raising=False)
    folder = tmp_path / "shared"
    (folder / "work").mkdir(parents=True)
    (folder / "evalkit.toml").write_text(CONFIG)
    os.chmod(folder, 0o755)
    os.chmod(folder / "evalkit.toml", 0o644)
    return folder


def refusal(work: Path) -> str:
    with pytest.raises(UntrustedConfigError) as caught:
        load_config(cwd=work)
    return str(caught.value)


def test_a_private_configuration_is_found_and_used(shared: Path) -> None:
    assert find_config(shared / "work") == shared / "evalkit.toml"
    assert "elsewhere" in load_config(cwd=shared / "work").providers


@pytest.mark.parametrize("mode", [0o646, 0o666])
def test_a_configuration_others_can_write_is_refused_naming_it_and_how_to_trust_it(shared: Path, mode: int) -> None:
    os.chmod(shared / "evalkit.toml", mode)
    message = refusal(shared / "work")
    assert f"refusing the configuration file {shared / 'evalkit.toml'}" in message
    assert f"is writable by others (mode 0{mode:o})" in message
    # load_config's path to a Python caller (the command line's --config: test_library_calls)
    assert f"name it (path={shared / 'evalkit.toml'}, or EVALKIT_CONFIG=" in message
    assert f"EVALKIT_TRUSTED_CONFIG_DIRS={shared}" in message


def test_a_configuration_in_a_folder_anyone_can_write_is_refused(shared: Path) -> None:
    os.chmod(shared, 0o1777)  # /tmp: sticky, and anyone can put an evalkit.toml there
    assert f"its folder {shared} is writable by others (mode 1777)" in refusal(shared / "work")


@as_root
def test_a_configuration_owned_by_another_user_is_refused_naming_the_owner(shared: Path) -> None:
    os.chown(shared / "evalkit.toml", NOBODY, -1)
    assert f"is owned by {_name(NOBODY)}" in refusal(shared / "work")


@as_root
def test_a_folder_owned_by_another_user_is_refused(shared: Path) -> None:
    os.chown(shared, NOBODY, -1)
    assert f"its folder {shared} is owned by" in refusal(shared / "work")


@as_root
def test_a_configuration_a_shared_group_can_write_is_refused(shared: Path) -> None:
    os.chown(shared / "evalkit.toml", -1, NOBODY)  # nogroup: not root's own group
    os.chmod(shared / "evalkit.toml", 0o664)
    assert "is writable by the group" in refusal(shared / "work")


def test_a_configuration_writable_by_the_owners_private_group_is_trusted(shared: Path) -> None:
    user = pwd.getpwuid(os.geteuid())
    group = grp.getgrgid(user.pw_gid)
    if group.gr_name != user.pw_name or set(group.gr_mem) - {user.pw_name}:
        pytest.skip(f"the group {group.gr_name} is not {user.pw_name}'s private group here")
    os.chown(shared / "evalkit.toml", -1, user.pw_gid)
    os.chmod(shared / "evalkit.toml", 0o664)  # umask 002, as Debian and Ubuntu give users with a private group
    assert untrusted_because(shared / "evalkit.toml") is None


@as_root
def test_under_sudo_the_calling_users_configuration_is_trusted(shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.chown(shared / "evalkit.toml", NOBODY, -1)
    monkeypatch.setenv("SUDO_UID", str(NOBODY))
    assert load_config(cwd=shared / "work").path == shared / "evalkit.toml"


@as_root
def test_a_sudo_uid_that_is_no_ascii_number_trusts_nobody_more(shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # str.isdigit() took "²", and int() of it ended every command in an internal error
    os.chown(shared / "evalkit.toml", NOBODY, -1)
    for odd in ("²", "٦٥٥٣٤", " 65534", "65_534"):
        monkeypatch.setenv("SUDO_UID", odd)
        assert f"is owned by {_name(NOBODY)}" in refusal(shared / "work"), odd


def test_a_link_to_a_file_others_can_write_is_refused(shared: Path, tmp_path: Path) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    os.chmod(drop, 0o1777)
    (shared / "evalkit.toml").rename(drop / "evalkit.toml")
    (shared / "evalkit.toml").symlink_to(drop / "evalkit.toml")
    assert f"that file's folder {drop} is writable by others" in refusal(shared / "work")


def test_naming_the_file_trusts_it(shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.chmod(shared, 0o1777)
    assert load_config(shared / "evalkit.toml", cwd=shared / "work").path == shared / "evalkit.toml"
    monkeypatch.setenv("EVALKIT_CONFIG", str(shared / "evalkit.toml"))
    assert load_config(cwd=shared / "work").path == shared / "evalkit.toml"


def test_an_empty_or_missing_evalkit_config_is_refused(shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_CONFIG", "")
    with pytest.raises(ConfigError, match="EVALKIT_CONFIG is set but empty"):
        load_config(cwd=shared / "work")
    monkeypatch.setenv("EVALKIT_CONFIG", str(shared / "missing.toml"))
    with pytest.raises(ConfigError, match=r"missing.toml \(named by EVALKIT_CONFIG\) does not exist"):
        load_config(cwd=shared / "work")


def test_a_folder_listed_as_trusted_is_trusted(shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.chmod(shared, 0o1777)
    monkeypatch.setenv("EVALKIT_TRUSTED_CONFIG_DIRS", os.pathsep.join(["/nowhere", str(shared)]))
    assert load_config(cwd=shared / "work").path == shared / "evalkit.toml"
    monkeypatch.setenv("EVALKIT_TRUSTED_CONFIG_DIRS", str(shared / "work"))  # a folder below it is not it
    refusal(shared / "work")
    monkeypatch.setenv("EVALKIT_TRUSTED_CONFIG_DIRS", f"{shared.parent}/*")  # DIR/* trusts the folders below DIR
    assert load_config(cwd=shared / "work").path == shared / "evalkit.toml"
    monkeypatch.setenv("EVALKIT_TRUSTED_CONFIG_DIRS", "shared")
    with pytest.raises(ConfigError, match="EVALKIT_TRUSTED_CONFIG_DIRS: 'shared' is not an absolute folder"):
        load_config(cwd=shared / "work")


def test_a_pyproject_without_tool_evalkit_is_passed_over_whoever_can_write_it(shared: Path) -> None:
    (shared / "evalkit.toml").unlink()
    (shared / "work" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    os.chmod(shared / "work" / "pyproject.toml", 0o666)
    assert find_config(shared / "work") is None


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"
