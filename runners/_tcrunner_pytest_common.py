"""What the parts of tcrunner's pytest plugin share: the base of the objects
registered with pytest, and the JSON encoders of the event lines."""

import json

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
# A string as a JSON string, for the lines written by hand on the hot paths.
_str = json.encoder.encode_basestring


class _Plugin:
    """Base of the objects registered with pytest: ``dir()`` of one lists its
    hooks only. pluggy looks at every name ``dir`` gives for a hook, and
    pytest's fixture manager inspects each one for a fixture (unwrapping it,
    walking the class's MRO): for the reporter's helpers and attributes that
    was most of the plugin's fixed cost on a small run."""

    def __dir__(self):
        return [name for name in dir(type(self)) if name.startswith("pytest_")]
