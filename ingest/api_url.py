"""Which GitHub API the ingest talks to: --api-url, else GITHUB_API_URL, else github.com, checked before any request.

Its own module, apart from `ingest.client`, so that `sync` can refuse a bad URL before its first stage without
importing githubkit (about a second).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Final
from urllib.parse import urlsplit

from theurian.errors import UsageError

DEFAULT_API_URL: Final = "https://api.github.com"
API_URL_ENV: Final = "GITHUB_API_URL"


def api_url_from(option: str | None, env: Mapping[str, str]) -> str:
    """--api-url, else GITHUB_API_URL, else https://api.github.com: an https URL, or plain http to a loopback host.

    Raises:
        UsageError: not an http(s) URL, or plain http to a host that is not loopback; before any request.
    """
    url = option or env.get(API_URL_ENV) or DEFAULT_API_URL
    source = "--api-url" if option else API_URL_ENV
    if re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", url) is None:
        raise UsageError(f"{source} {url[:200]!r} is not an http(s) URL")
    # The token rides in every request's Authorization header: plain http would hand it to whoever is on the
    # path, so it is allowed only where no path leaves the machine (the tests' and the demo's fake GitHub).
    if url.startswith("http://") and not _loopback(url):
        raise UsageError(f"{source} {url[:200]!r} is plain http to a host that is not loopback, and the token "
                         "would travel unencrypted: use https:// (GitHub Enterprise: https://HOST/api/v3); "
                         "plain http is accepted only for 127.0.0.1 (any 127.x.y.z), ::1 or localhost")
    return url.rstrip("/")


def _loopback(url: str) -> bool:
    """Whether `url` names localhost or a loopback address (127.0.0.0/8, ::1)."""
    try:
        host = urlsplit(url).hostname
    except ValueError:  # `http://[::1` and the like: no host at all, so no loopback one
        return False
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: only `localhost` is taken on trust, since any other may resolve anywhere
        return False
