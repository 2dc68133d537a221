"""Whether a configuration file evalkit found by itself may be used.

A configuration decides where evalkit sends the key an ``api_key_env`` names (``GITHUB_TOKEN``
included), which store it writes and which files it reads. Discovery walks up the folders, so on
a shared machine anyone who can write ``/tmp/evalkit.toml`` would configure every evalkit command
run below ``/tmp``. As git does for a repository (``safe.directory``), a configuration file that
evalkit *discovered* is refused when someone else could have written it:

- the file, or the folder it sits in, is owned by another user — root's files excepted, and when
  root runs evalkit through ``sudo``, the files of the user who called ``sudo`` (``SUDO_UID``);
- or the file or its folder is writable by others, or by a group that is not the owner's own
  private group (the scheme of Debian and Ubuntu, whose users' files are group-writable by default);
- a file that is a symbolic link is judged by the link's folder and by its target and the target's folder.

A configuration named explicitly — ``--config PATH`` or ``EVALKIT_CONFIG`` — is trusted as named,
and so is one found in a folder listed in :data:`TRUSTED_DIRS_VARIABLE`. The check runs in
:func:`evalkit.config.find_config`, which every command passes through before it reads anything
else, opens a store or sends a request.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from .environment import variable
from .errors import ConfigError
from .shapes import whole_number
from .wording import argument, path_named

__all__ = ["TRUSTED_DIRS_VARIABLE", "UntrustedConfigError", "check_trusted", "untrusted_because"]

#: The environment variable listing folders whose discovered configuration is trusted whoever
#: owns it (``os.pathsep``-separated absolute folders; ``DIR/*`` trusts DIR and every folder
#: below it; ``*`` trusts every folder).
TRUSTED_DIRS_VARIABLE = "EVALKIT_TRUSTED_CONFIG_DIRS"


class UntrustedConfigError(ConfigError):
    """A discovered configuration file someone else could have written (exit 2, nothing read)."""


def check_trusted(path: Path, environ: Mapping[str, str] | None = None) -> None:
    """Raise :class:`UntrustedConfigError` naming ``path``, why, and how to trust it, when the
    discovered configuration ``path`` may have been written by someone else."""
    environ = os.environ if environ is None else environ
    reason = untrusted_because(path, environ)
    if reason is None or _listed_as_trusted(path, environ):
        return
    shown, folder = path_named(path), path_named(path.parent)
    raise UntrustedConfigError(
        f"refusing the configuration file {shown}, found by looking up from the working directory: {reason}, "
        "so someone else could decide where evalkit sends your keys and what it reads and stores. "
        f"If you trust it, name it ({argument('path', shown, option=f'--config {shown}')}, or EVALKIT_CONFIG={shown}), or add its folder to "
        f"{TRUSTED_DIRS_VARIABLE} ({TRUSTED_DIRS_VARIABLE}={folder}); otherwise remove it, or run evalkit from "
        "a project that has its own evalkit.toml"
    )


def untrusted_because(path: Path, environ: Mapping[str, str] | None = None) -> str | None:
    """Why someone other than the user (or root) could have written the configuration ``path``:
    the file's or a folder's owner or mode; ``None`` when nobody else could have (or on a system
    without POSIX owners)."""
    if os.name != "posix":
        return None
    environ = os.environ if environ is None else environ
    trusted_owners = _trusted_owners(environ)
    places = [("it", path), (f"its folder {path_named(path.parent)}", path.parent)]
    if path.is_symlink():
        target = Path(os.path.realpath(path))
        places[0] = (f"the file it links to, {path_named(target)},", target)
        places.append((f"that file's folder {path_named(target.parent)}", target.parent))
    for what, place in places:
        try:
            status = os.stat(place)
        except OSError as exc:  # it was just found: it changed, or a folder cannot be looked into
            return f"{what} cannot be looked up ({exc.strerror}), so who can write it is unknown"
        if status.st_uid not in trusted_owners:
            you = "root (you)" if os.geteuid() == 0 else f"you ({_user(os.geteuid())}) or root"
            return f"{what} is owned by {_user(status.st_uid)}, not by {you}"
        writers = _other_writers(status)
        if writers:
            return f"{what} is writable by {writers} (mode {stat.S_IMODE(status.st_mode):04o})"
    return None


def _trusted_owners(environ: Mapping[str, str]) -> set[int]:
    """The current user, root, and under ``sudo`` the user who called it."""
    owners = {os.geteuid(), 0}
    sudo_uid = whole_number(environ.get("SUDO_UID", ""), max_digits=10)
    if os.geteuid() == 0 and sudo_uid is not None:
        owners.add(sudo_uid)
    return owners


def _other_writers(status: os.stat_result) -> str | None:
    """Who besides the owner may write what ``status`` describes: ``others``, ``group NAME``, or ``None``."""
    if status.st_mode & stat.S_IWOTH:
        return "others"
    if status.st_mode & stat.S_IWGRP and not _private_group(status.st_uid, status.st_gid):
        return f"the group {_group(status.st_gid)}"
    return None


def _private_group(uid: int, gid: int) -> bool:
    """True when ``gid`` is the user ``uid``'s own group: their primary group, named as they are,
    with no other member (a user private group, so group-writable means owner-writable)."""
    import grp
    import pwd

    try:
        user = pwd.getpwuid(uid)
        group = grp.getgrgid(gid)
    except KeyError:
        return False
    return user.pw_gid == gid and group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}


def _listed_as_trusted(path: Path, environ: Mapping[str, str]) -> bool:
    """True when the folder of ``path`` is listed in :data:`TRUSTED_DIRS_VARIABLE`."""
    listed = variable(TRUSTED_DIRS_VARIABLE, "absolute folders separated by " + repr(os.pathsep), "trust no folder so", environ=environ, error=ConfigError) or ""
    folder = os.path.realpath(path.parent)
    for entry in filter(None, listed.split(os.pathsep)):
        if entry == "*":
            return True
        below = entry.endswith(("/*", os.sep + "*"))
        base = entry[:-2] if below else entry
        if not os.path.isabs(base):
            raise ConfigError(f"{TRUSTED_DIRS_VARIABLE}: {base!r} is not an absolute folder; list absolute folders separated by {os.pathsep!r}")
        base = os.path.realpath(base)
        if folder == base or (below and folder.startswith(base.rstrip(os.sep) + os.sep)):
            return True
    return False


def _user(uid: int) -> str:
    import pwd

    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _group(gid: int) -> str:
    import grp

    try:
        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except KeyError:
        return f"gid {gid}"
