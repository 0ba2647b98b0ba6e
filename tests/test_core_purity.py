"""The DP core must import without Apache Beam."""

import subprocess
import sys


def test_core_does_not_import_beam():
    code = (
        "import sys\n"
        "import transforms.core\n"
        "import transforms.core.accounting, transforms.core.counters, transforms.core.errors\n"
        "import transforms.core.noise, transforms.core.static\n"
        "assert 'apache_beam' not in sys.modules, sorted(m for m in sys.modules if 'beam' in m)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_public_transforms_are_exported():
    import transforms

    for name in transforms.__all__:
        assert getattr(transforms, name) is not None
    assert transforms.ReleaseFullyDynamic.__name__ == "ReleaseFullyDynamic"
