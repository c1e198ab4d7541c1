from chatledger.cli._app import main


def test_demo_runs(capsys):
    assert main(["demo", "--format", "json"]) == 0
