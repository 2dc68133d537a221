"""The viewer over a run of an installed plugin whose case ids no text column takes as they are
(NUL, a lone surrogate, U+FFFF): every address it writes leads to the page it names."""

from __future__ import annotations

import html
import re
from pathlib import Path

from evalkit.reports.escape import html_text
from evalkit.view.urls import case_url

HOSTILE_IDS = ("plain", "nul\x00inside", "bytes-\udcff-undecodable", "nonchar-\uffff0-escape")


def test_every_case_link_of_a_run_whose_ids_hold_a_lone_surrogate_opens_its_case(evalkit_cli, plugin_dists, project: Path) -> None:
    from evalkit.view import create_app
    from starlette.testclient import TestClient

    env = {"PYTHONPATH": plugin_dists("evalkit-hostile-storage")}
    ran = evalkit_cli("run", "hostilestore.ids", "--privacy", "full", "--json", env=env)
    assert ran.code == 0, ran.stderr
    run_id = ran.json()["run_id"]
    app = create_app(f"sqlite:///{project / '.evalkit' / 'results.db'}", port=8765)
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        run_page = client.get("/run", params={"id": run_id})
        assert run_page.status_code == 200
        links = [html.unescape(link) for link in re.findall(r'href="(/case\?[^"]*)"', run_page.text)]
        assert sorted(set(links)) == sorted(case_url(run_id, case_id) for case_id in HOSTILE_IDS)
        for case_id in HOSTILE_IDS:
            # The link the run page wrote, as a browser sends it: the lone surrogate's bytes
            # (%ED%B3%BF) were read back as three U+FFFD, so that case was "no such case", 404.
            page = client.get(case_url(run_id, case_id))
            assert page.status_code == 200, (case_id, page.text[:300])
            assert html_text(case_id) in page.text
        assert client.get(f"/case?run={run_id}&id=bytes-%FF-undecodable").status_code == 404  # not UTF-8: no case
