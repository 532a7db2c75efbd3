"""Executes a notebook of the book with nbclient, in a scratch directory, and fails on any
error: the notebooks are run in CI so that they cannot drift from the package."""

import sys
import tempfile

import nbclient
import nbformat


def main(path: str) -> None:
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="agora-notebook-") as scratch:
        client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": scratch}})
        client.execute()
    cells = sum(1 for c in nb.cells if c.cell_type == "code")
    print(f"{path}: {cells} code cells executed")


if __name__ == "__main__":
    main(sys.argv[1])
