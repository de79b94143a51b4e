# SPDX-License-Identifier: MIT
"""DLPack producers made with ctypes, from the documented struct: any
device type, strides and byte offset, over memory the test owns, with a
deleter that counts its calls."""
import ctypes

CPU, CUDA, CUDA_HOST, VULKAN, ROCM, ROCM_HOST, CUDA_MANAGED = 1, 2, 3, 7, 10, 11, 13


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", DELETER)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


READ_ONLY, IS_COPIED = 1, 2

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeTensor:
    """Exposes `buf` (a ctypes array or anything with an address) through
    __dlpack__ only."""

    def __init__(self, address, shape, itemsize=1, device=CPU, strides=None,
                 byte_offset=0, keep=None, versioned=False, flags=0,
                 major=1, on_export=None):
        """versioned: answers __dlpack__(max_version=...) with a DLPack 1.x
        capsule carrying `flags` (else max_version is a TypeError, as
        for a producer of DLPack 0.x); on_export(self) runs at each
        export (Python code of the producer's)."""
        self.versioned = versioned
        self.flags = flags
        self.major = major
        self.on_export = on_export
        self.address = address
        self.shape = list(shape)
        self.itemsize = itemsize
        self.device = device
        self.strides = strides
        self.byte_offset = byte_offset
        self.keep = keep      # the memory's owner, kept alive
        self.deleted = 0
        self.exported = 0
        self._live = {}
        self._deleter = DELETER(self._delete)

    def _delete(self, ptr):
        self.deleted += 1
        self._live.pop(ptr, None)

    def __dlpack_device__(self):
        return (self.device, 0)

    def __dlpack__(self, stream=None, **kw):
        if kw and (not self.versioned or set(kw) != {"max_version"}):
            raise TypeError("unexpected keyword argument %r" % sorted(kw))
        if self.on_export:
            self.on_export(self)
        n = len(self.shape)
        shape = (ctypes.c_int64 * max(n, 1))(*self.shape)
        strides = None
        if self.strides is not None:
            strides = (ctypes.c_int64 * max(n, 1))(*self.strides)
        versioned = bool(kw)
        m = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        if versioned:
            m.major, m.minor, m.flags = self.major, 0, self.flags
        m.dl_tensor.data = self.address
        m.dl_tensor.device = DLDevice(self.device, 0)
        m.dl_tensor.ndim = n
        m.dl_tensor.dtype = DLDataType(1, 8 * self.itemsize, 1)
        m.dl_tensor.shape = shape
        m.dl_tensor.strides = (ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
                               if strides is not None else None)
        m.dl_tensor.byte_offset = self.byte_offset
        m.deleter = self._deleter
        ptr = ctypes.addressof(m)
        self._live[ptr] = (m, shape, strides)
        self.exported += 1
        name = b"dltensor_versioned" if versioned else b"dltensor"
        return _capsule_new(ptr, name, None)


class FakeCudaArray:
    """__cuda_array_interface__ (version 3) over an address."""

    def __init__(self, address, nbytes, readonly=False, strides=None,
                 shape=None):
        self.__cuda_array_interface__ = {
            "shape": shape or (nbytes,), "typestr": "|u1",
            "data": (address, readonly), "version": 3, "strides": strides}
