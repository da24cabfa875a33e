"""``tkit data``: find, verify or download the datasets the grading needs (MNIST)."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.commands.options import data_dir_option, lang_option


@click.group(name="data")
def command():
    """Find, check or download the datasets (MNIST for the AutoEncoder's grading)."""


@command.command(name="mnist")
@click.option("--download", is_flag=True,
              help="Fetch the four MNIST archives through torchvision (needs internet) into "
                   "--data-dir/raw or the kit's datasets/mnist/raw.")
@data_dir_option(help="Folder holding the IDX files (directly, in raw/ or in MNIST/raw/); searched first.",
                 exists=False)
@click.option("--verify", is_flag=True, help="Check every file found against the manifest's MD5s and sizes.")
@lang_option()
def mnist_command(download, data_dir, verify, lang):
    """Show where MNIST is found (and which splits), verify it or download it.

    Exits 1 when the test set is missing or a file fails verification.
    """
    from autograder import mnist

    try:
        _report(mnist, download, data_dir, verify)
    except mnist.DatasetError as exc:
        raise click.ClickException(str(exc)) from None


def _report(mnist, download: bool, data_dir: Path | None, verify: bool) -> None:
    from autograder.i18n import _

    if download:
        folder = mnist.download(data_dir)
        click.echo(_("MNIST downloaded to {folder}").format(folder=folder))
        data_dir, verify = data_dir or folder.parent, True
    found = {}
    for split in ("test", "train"):
        try:
            found[split] = mnist.locate(split, data_dir)
        except mnist.DatasetMissing:
            if split == "test":
                raise
    for split, files in found.items():
        for kind, path in files.items():
            if verify:
                mnist.verify_file(path)
            click.echo(f"{split:5s} {kind:6s} {path}" + ("  " + _("OK") if verify else ""))
    if "train" not in found:
        click.echo(_("The training set is not present: grading samples both its training and held-out "
                     "digits from the 10,000 test digits (`tkit data mnist --download` fetches it)."))
