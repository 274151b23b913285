from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import BOTH_ERAS, call_tool


def test_a_registered_project_is_listed_by_a_real_client_in_both_eras(
    installation: Installation, daemon: RunningDaemon, tmp_path
) -> None:
    installation.new_project(tmp_path / "Demo_Project")
    for mode in BOTH_ERAS:
        answer = call_tool(daemon.mcp_url, "project.list", {}, mode)
        assert not answer.is_error
        assert answer.structured == {
            "count": 1,
            "projects": [{"projectId": "demo-project", "rootPath": str((tmp_path / "Demo_Project").resolve())}],
            "unreadable": [],
            "remedy": None,
        }
