"""One evolution run's directory (gi evolve): drawn from its run_summary.json,
which `gi report` makes from the run's records first."""
ORDER = 20
WANTS = "a run directory (config.json, generations.jsonl or run_summary.json)"
NEEDS = {"matplotlib": "apt-get install python3-matplotlib"}


def recognises(path):
    from run_data import is_run_dir
    return is_run_dir(path)


def draw(path):
    from run_data import load_run
    from run_page import run_section
    run = load_run(path)
    title = f"gi evolution run {run['name']}" + (f": {run['kernel']}" if run.get("kernel") else "")
    return title, run_section(run, level=2, title="Summary", legend=True)
