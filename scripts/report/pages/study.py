"""An ablation study's folder (gi ablate): study.json and study_results.json.
Its statistics (study_stats.py, scipy) are also written to
STUDY_DIR/study_summary.json."""
import os

ORDER = 10
WANTS = "an ablation study (study.json)"
NEEDS = {"matplotlib": "apt-get install python3-matplotlib", "scipy": "apt-get install python3-scipy"}


def recognises(path):
    return os.path.isfile(os.path.join(path, "study.json"))


def draw(path):
    import study_stats
    from study_page import study_html
    summary = study_stats.summarise(study_stats.load_results(path))
    study_stats.write_summary(summary, os.path.join(path, "study_summary.json"))
    return f"gi ablation study: {os.path.basename(os.path.normpath(path))}", study_html(summary)
