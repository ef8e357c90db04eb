"""highbar specs (``*.highbar.yaml``): read and validate them into typed objects.

``load_highbar(path, environ)`` returns a :class:`HighbarSpec` (its parts are the classes of
:mod:`.spec`) or raises ``SpecError`` with every problem of the file, each a
:class:`HighbarProblem` in highbar's one-line, path-addressed form.
"""

from .problem import HighbarProblem
from .spec import HighbarSpec
from .validate import load_highbar, load_highbar_text

__all__ = ["HighbarProblem", "HighbarSpec", "load_highbar", "load_highbar_text"]
