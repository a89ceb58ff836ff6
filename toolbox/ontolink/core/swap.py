"""Replace a path by another in one step: Linux's ``renameat2(RENAME_EXCHANGE)`` swaps two paths atomically,
so a reader (or a kill) finds the old artifact or the new one at the path, never nothing.

``os.rename`` cannot put a directory over a non-empty one, and two renames (old away, new in) leave the path
empty between them. Where the system call is missing (not Linux, glibc before 2.28) or the file system
refuses it, the two renames are the fallback.
"""

import ctypes
import ctypes.util
import errno
import os

RENAME_EXCHANGE = 2
AT_FDCWD = -100


def _renameat2():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        function = libc.renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


_RENAMEAT2 = _renameat2()


def exchange(first, second):
    """Swap the paths ``first`` and ``second`` (both must exist) in one system call; False when this system
    cannot, and nothing was changed."""
    if _RENAMEAT2 is None:
        return False
    result = _RENAMEAT2(AT_FDCWD, os.fsencode(first), AT_FDCWD, os.fsencode(second), RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False  # a file system without exchange (some network and FUSE ones)
    raise OSError(code, os.strerror(code), str(second))


def replace(new, target, old):
    """Put ``new`` at ``target``. What was at ``target`` ends at ``old`` (a path that must not exist), or nowhere
    when there was nothing; the caller deletes it. One atomic step where the system can swap paths."""
    if not (os.path.lexists(target)):
        os.rename(new, target)
        return False
    if exchange(new, target):
        os.rename(new, old)  # ``new`` now names the previous artifact
        return True
    os.rename(target, old)
    os.rename(new, target)
    return True
