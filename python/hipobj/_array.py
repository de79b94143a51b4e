# SPDX-License-Identifier: MIT
"""Client.get_array: an object into a new array the client allocates."""


def get_array(self, url, dtype="uint8", shape=None, device="cpu"):
    """get_array(url, dtype='uint8', shape=None, device='cpu') -> array

    Read the whole object into a new array. device 'cpu': a numpy.ndarray
    (needs NumPy). device 'cuda', 'cuda:N' (or a torch.device): a torch
    tensor on that GPU (needs torch), filled through DLPack. The object's
    size must be a whole number of `dtype` items; `shape` (optional) must
    hold exactly that many. Raises as Client.get_into."""
    size = self.head(url)["size"]
    if str(device) == "cpu":
        import numpy as np
        dt = np.dtype(dtype)
        count = _count(size, dt.itemsize, url)
        out = np.empty(_shape(shape, count), dtype=dt)
    else:
        try:
            import torch
        except ImportError as e:
            raise InvalidArgument("device %r needs torch, which is not "
                                  "installed" % (device,)) from e
        dt = dtype if isinstance(dtype, torch.dtype) else getattr(torch, str(dtype))
        item = torch.empty((), dtype=dt).element_size()
        count = _count(size, item, url)
        out = torch.empty(_shape(shape, count), dtype=dt, device=device)
    if size:
        self.get_into(url, out)
    return out


def _count(size, item, url):
    if size % item:
        raise InvalidArgument("%s has %d bytes: not a whole number of "
                              "%d-byte items" % (url, size, item))
    return size // item


def _shape(shape, count):
    if shape is None:
        return (count,)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = 1
    for d in shape:
        n *= d
    if n != count:
        raise InvalidArgument("shape %r holds %d items; the object has %d"
                              % (shape, n, count))
    return shape


from ._core import InvalidArgument  # noqa: E402
