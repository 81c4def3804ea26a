"""MkDocs hook: serve the repository's top-level ``screenshots/`` with the documentation.

The pages link their pictures as ``../screenshots/NAME.png`` so the same link works when the
Markdown is read on a forge; MkDocs resolves such a link to ``../screenshots/NAME.png``
outside ``docs/``. This hook adds each picture to the build under exactly that source path,
written to ``screenshots/NAME.png`` in the site, so ``mkdocs build --strict`` checks those
links like any other and the built pages show the pictures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files, InclusionLevel


def on_files(files: Files, config: Any) -> Files:
    """Add ``../screenshots/*.png`` (relative to ``docs/``) to the files MkDocs builds."""
    folder = Path(config["config_file_path"]).parent / "screenshots"
    for picture in sorted(folder.glob("*.png")):
        file = File.generated(
            config,
            f"../screenshots/{picture.name}",
            abs_src_path=str(picture),
            inclusion=InclusionLevel.INCLUDED,
        )
        file.dest_uri = f"screenshots/{picture.name}"
        files.append(file)
    return files
