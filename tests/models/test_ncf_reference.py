"""The NumPy NCF trainer against weights Cornac's TensorFlow trainer wrote (no TensorFlow here).

tests/fixtures/ncf_tensorflow/reference.npz holds Cornac's TensorFlow-trained GMF / MLP /
NeuMF weights on the toy data of test_ncf_train.py, after 1 and after 20 epochs, for its 8
configurations (how it was produced: that folder's README.md). Every weight must agree within
1e-5, the tolerance of the TensorFlow test that this replaces where TensorFlow is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cornac")
import cornac  # noqa: E402

from recbias_tutorial.models import _ncf_train as trainer  # noqa: E402

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "ncf_tensorflow"
TOLERANCE = 1e-5


def _maker():
    """The fixture's own script (its configurations, data and flattening), without running it."""
    source = (HERE / "make_reference.py").read_text()
    names: dict = {}
    # only the definitions: the script imports TensorFlow at its top, which CI lacks
    code = source.split("import cornac  # noqa: E402", 1)[1]
    code = code.replace("import tensorflow as tf  # noqa: E402", "")
    exec(compile("import numpy as np\nimport cornac\n" + code, str(HERE / "make_reference.py"),
                 "exec"), names)
    return names


MAKER = _maker()
REFERENCE = np.load(HERE / "reference.npz")
META = json.loads((HERE / "reference.json").read_text())


def test_the_reference_covers_every_configuration_twice():
    assert len(MAKER["CONFIGS"]) == 8 and MAKER["EPOCHS"] == (1, 20)
    assert len(META["configs"]) == 16


@pytest.mark.parametrize("epochs", MAKER["EPOCHS"])
@pytest.mark.parametrize("kind,options", MAKER["CONFIGS"],
                         ids=[MAKER["config_name"](k, o) for k, o in MAKER["CONFIGS"]])
def test_numpy_trainer_equals_the_stored_tensorflow_weights(kind, options, epochs):
    data = MAKER["dataset"]()
    model = getattr(cornac.models, kind)(**{"verbose": False, "seed": 123, "backend": "numpy",
                                            **MAKER["KINDS"][kind], **options,
                                            "num_epochs": epochs, "batch_size": 32})
    data.reset()
    got = MAKER["flat"](trainer.fit_ncf(model, data).numpy_weights)
    name = f"{MAKER['config_name'](kind, options)}/epochs={epochs}"
    want = {key[len(name) + 1:]: REFERENCE[key] for key in REFERENCE.files
            if key.startswith(name + "/")}
    assert want and set(got) == set(want)
    start = MAKER["flat"](trainer.initial_weights(model, data.num_users, data.num_items))
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=0, atol=TOLERANCE,
                                   err_msg=f"{name} {key}")
    assert max(np.abs(want[k] - start[k]).max(initial=0) for k in want) > 1e-3  # it trained
