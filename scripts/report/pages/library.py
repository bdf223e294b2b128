"""A library of evolved kernels (evolved/<gpu>/): every kernel folder's
result.json and run_summary.json, and failures.json."""
import os

ORDER = 30
WANTS = "a library of evolved kernels (<family>-<kernel>/result.json folders)"
NEEDS = {"matplotlib": "apt-get install python3-matplotlib"}


def recognises(path):
    from library_data import is_library_dir
    return is_library_dir(path)


def draw(path):
    from library_data import load_library
    from library_page import library_html
    return f"gi evolved kernels: {os.path.basename(os.path.normpath(path))}", library_html(load_library(path))
