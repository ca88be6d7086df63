"""shoal - OpenSHMEM from Python over libshoal (ctypes; no compiled part of its own).

Names follow nvshmem4py's where they fit (docs/python.md):

    import shoal, numpy as np
    shoal.init()                                   # idempotent; shoal.finalize() runs at exit
    me, n = shoal.my_pe(), shoal.n_pes()
    a = shoal.zeros((4,), 'int64')                 # numpy array over the host symmetric heap (collective)
    shoal.put(a, np.full(4, me), (me + 1) % n)     # a on the next PE gets our values
    shoal.barrier_all()
    out = shoal.zeros((n, 4), 'int64')
    shoal.fcollect(shoal.TEAM_WORLD, out, a)       # out[p] = a of PE p
    shoal.reduce(shoal.TEAM_WORLD, a, a, 'sum')    # in place sum over every PE
    d = shoal.array((1024,), 'float32', device='cuda')   # device symmetric heap: __cuda_array_interface__,
    t = torch.from_dlpack(d)                             # __dlpack__ / __dlpack_device__
    shoal.reduce(shoal.TEAM_WORLD, d, d, 'sum', stream=torch.cuda.current_stream())

Every routine that takes arrays checks them first and raises TypeError / ValueError naming the routine and the
argument (wrong dtype, size mismatch, not a symmetric array, pe out of range), so that libshoal's own checks (which
end the job) are never reached from Python.

The library: $SHOAL_LIB if set, else the libshoal that meson built or installed with this module (_config.py), else
libshoal.so.0 from the loader's path.
"""
import atexit
import ctypes
import os
import sys
import threading

__all__ = ['init', 'finalize', 'my_pe', 'n_pes', 'barrier_all', 'sync_all', 'team_my_pe', 'team_n_pes',
           'TEAM_WORLD', 'TEAM_SHARED', 'array', 'zeros', 'tensor', 'free', 'free_array', 'free_tensor',
           'get_peer_array', 'peer_ptrs', 'put', 'get', 'quiet', 'fcollect', 'alltoall', 'reduce', 'allreduce',
           'gpu_available', 'gpu_device', 'DeviceArray', 'ShoalError']

SHMEMX_MALLOC_DEVICE = 1 << 16
SHMEMX_DEVICE_MAX_PES = 256


class ShoalError(RuntimeError):
    """A libshoal routine returned an error status."""


# ---- the library ----
def _lib_path():
    env = os.environ.get('SHOAL_LIB')
    if env:
        return env
    try:
        from ._config import LIBSHOAL  # written by meson: the installed (or built) libshoal's absolute path
        if os.path.exists(LIBSHOAL):
            return LIBSHOAL
    except ImportError:
        pass
    return 'libshoal.so.0'


_lib = None
_lock = threading.Lock()


def _load():
    global _lib
    if _lib is None:
        path = _lib_path()
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise ImportError(f'shoal: cannot load libshoal from {path!r} (set SHOAL_LIB to its path): {e}') from None
        vp, sz, i, lg = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_long
        for name, res, args in [
                ('shmem_init', None, []), ('shmem_finalize', None, []), ('shmem_my_pe', i, []),
                ('shmem_n_pes', i, []), ('shmem_barrier_all', None, []), ('shmem_sync_all', None, []),
                ('shmem_quiet', None, []), ('shmem_team_my_pe', i, [vp]), ('shmem_team_n_pes', i, [vp]),
                ('shmem_team_translate_pe', i, [vp, i, vp]),
                ('shmem_malloc', vp, [sz]), ('shmem_malloc_with_hints', vp, [sz, lg]), ('shmem_free', None, [vp]),
                ('shmem_ptr', vp, [vp, i]), ('shmem_putmem', None, [vp, vp, sz, i]),
                ('shmem_getmem', None, [vp, vp, sz, i]),
                ('shmem_fcollectmem', i, [vp, vp, vp, sz]), ('shmem_alltoallmem', i, [vp, vp, vp, sz]),
                ('shmemx_gpu_available', i, []), ('shmemx_gpu_device', i, []),
                ('shmemx_device_state_get', i, [vp, sz]),
                ('shmemx_putmem_on_stream', None, [vp, vp, sz, i, vp]),
                ('shmemx_getmem_on_stream', None, [vp, vp, sz, i, vp]),
                ('shmemx_quiet_on_stream', None, [vp]), ('shmemx_barrier_all_on_stream', None, [vp]),
                ('shmemx_fcollectmem_on_stream', i, [vp, vp, vp, sz, vp]),
                ('shmemx_alltoallmem_on_stream', i, [vp, vp, vp, sz, vp])]:
            f = getattr(lib, name)
            f.restype = res
            f.argtypes = args
        _lib = lib
    return _lib


# ---- setup ----
_state = {'init': False, 'final': False, 'atexit': False, 'uncaught': False}
TEAM_WORLD = None   # set by init(): the handle values of SHMEM_TEAM_WORLD / SHMEM_TEAM_SHARED (ints)
TEAM_SHARED = None


def init():
    """Join the job (shmem_init): collective over every PE that oshrun started. A second call is a no-op; a call after
    finalize() raises (OpenSHMEM cannot start twice). finalize() is registered to run at interpreter exit, unless an
    exception went uncaught (then this PE exits with status 1 without finalizing, and oshrun stops the job)."""
    global TEAM_WORLD, TEAM_SHARED
    with _lock:
        if _state['final']:
            raise ShoalError('shoal.init: called after shoal.finalize (OpenSHMEM cannot be started again)')
        if _state['init']:
            return
        lib = _load()
        lib.shmem_init()
        TEAM_WORLD = ctypes.c_void_p.in_dll(lib, 'SHMEM_TEAM_WORLD').value
        TEAM_SHARED = ctypes.c_void_p.in_dll(lib, 'SHMEM_TEAM_SHARED').value
        _state['init'] = True
        if not _state['atexit']:
            atexit.register(_at_exit)
            _chain_excepthook()
            _state['atexit'] = True


def _chain_excepthook():
    # Python runs atexit handlers after an uncaught exception too: a failed PE must not enter shmem_finalize's
    # barrier while its peers are elsewhere (a hang until oshrun's timeout). The hook notes the failure and hands
    # the exception on to the hook it replaces; Python then exits with status 1, which libshoal's own exit handler
    # also reads as "do not finalize", and oshrun stops the job.
    prev = sys.excepthook

    def hook(tp, value, tb):
        _state['uncaught'] = True
        prev(tp, value, tb)
    sys.excepthook = hook


def _at_exit():
    if not _state['uncaught']:
        finalize()


def finalize():
    """shmem_finalize (collective); later calls are no-ops. Arrays from shoal.array must not be used afterwards."""
    with _lock:
        if not _state['init'] or _state['final']:
            return
        _state['final'] = True
        _allocs.clear()
        _lib.shmem_finalize()


def _need(routine):
    if _state['final']:
        raise ShoalError(f'shoal.{routine}: called after shoal.finalize()')
    if not _state['init']:
        raise ShoalError(f'shoal.{routine}: called before shoal.init()')
    return _lib


def my_pe():
    """This PE's number in [0, n_pes())."""
    return _need('my_pe').shmem_my_pe()


def n_pes():
    """Number of PEs in the job."""
    return _need('n_pes').shmem_n_pes()


def barrier_all(stream=None):
    """shmem_barrier_all (every PE's puts complete, then every PE waits); with stream, the stream-ordered form
    shmemx_barrier_all_on_stream (enqueued, the host does not wait)."""
    lib = _need('barrier_all')
    if stream is None:
        lib.shmem_barrier_all()
    else:
        lib.shmemx_barrier_all_on_stream(_stream_handle('barrier_all', stream))


def sync_all():
    """shmem_sync_all: every PE waits, no memory ordering."""
    _need('sync_all').shmem_sync_all()


def quiet(stream=None):
    """shmem_quiet (or shmemx_quiet_on_stream with stream): this PE's puts are complete at their targets."""
    lib = _need('quiet')
    if stream is None:
        lib.shmem_quiet()
    else:
        lib.shmemx_quiet_on_stream(_stream_handle('quiet', stream))


def _team(routine, team):
    if team is None:
        return TEAM_WORLD
    if not isinstance(team, int) or team == 0:
        raise TypeError(f'shoal.{routine}: team: expected a team handle such as shoal.TEAM_WORLD, got {team!r}')
    return team


def team_my_pe(team):
    """This PE's number in team (-1 if not a member)."""
    return _need('team_my_pe').shmem_team_my_pe(_team('team_my_pe', team))


def team_n_pes(team):
    """Number of PEs in team."""
    return _need('team_n_pes').shmem_team_n_pes(_team('team_n_pes', team))


def gpu_available():
    """True if this PE has a GPU and the device symmetric heap is mapped to every PE (shmemx_gpu_available)."""
    return bool(_need('gpu_available').shmemx_gpu_available())


def gpu_device():
    """The CUDA device ordinal of this PE's GPU (shmemx_gpu_device), or -1 without one: hand it to
    torch.cuda.set_device so that torch and the device heap use the same GPU."""
    return _need('gpu_device').shmemx_gpu_device()


# ---- dtypes ----
# name: (itemsize, typestr, DLPack (code, bits), libshoal reduction type name or None, ops)
_ARITH = ('sum', 'prod', 'min', 'max')
_DTYPES = {
    'int8': (1, '|i1', (0, 8), 'int8', _ARITH), 'int16': (2, '<i2', (0, 16), 'int16', _ARITH),
    'int32': (4, '<i4', (0, 32), 'int32', _ARITH), 'int64': (8, '<i8', (0, 64), 'int64', _ARITH),
    'uint8': (1, '|u1', (1, 8), 'uint8', _ARITH), 'uint16': (2, '<u2', (1, 16), 'uint16', _ARITH),
    'uint32': (4, '<u4', (1, 32), 'uint32', _ARITH), 'uint64': (8, '<u8', (1, 64), 'uint64', _ARITH),
    'float16': (2, '<f2', (2, 16), 'half', _ARITH), 'bfloat16': (2, None, (4, 16), 'bfloat16', _ARITH),
    'float32': (4, '<f4', (2, 32), 'float', _ARITH), 'float64': (8, '<f8', (2, 64), 'double', _ARITH),
    'bool': (1, '|b1', (6, 8), None, ()),
}
_TYPESTR = {v[1]: k for k, v in _DTYPES.items() if v[1]}
_TYPESTR.update({'<f2': 'float16', '|i1': 'int8', '<i1': 'int8', '|u1': 'uint8', '<u1': 'uint8', '|b1': 'bool'})
_ALIASES = {'float': 'float64', 'double': 'float64', 'half': 'float16', 'int': 'int64', 'long': 'int64',
            'bf16': 'bfloat16', 'f4': 'float32', 'f8': 'float64', 'i4': 'int32', 'i8': 'int64', 'bool_': 'bool'}


def _dtype_name(routine, dtype):
    """A dtype given as a numpy dtype, a torch dtype, or a string, as one of _DTYPES' names."""
    name = getattr(dtype, 'name', None) if not isinstance(dtype, str) else dtype
    if name is None:
        name = str(dtype)
    if isinstance(dtype, type):  # np.float32, float, int, bool
        name = {float: 'float64', int: 'int64', bool: 'bool'}.get(dtype, dtype.__name__)
    name = str(name)
    if name.startswith('torch.'):
        name = name[6:]
    name = _ALIASES.get(name, name)
    if name not in _DTYPES:
        raise TypeError(f'shoal.{routine}: dtype: {dtype!r} is not supported (one of {", ".join(_DTYPES)})')
    return name


# ---- the symmetric allocations of this PE ----
_allocs = {}   # base address -> _Alloc


class _Alloc:
    __slots__ = ('addr', 'nbytes', 'device', 'live')

    def __init__(self, addr, nbytes, device):
        self.addr, self.nbytes, self.device, self.live = addr, nbytes, device, True


def _find_alloc(addr, nbytes):
    for a in _allocs.values():
        if a.addr <= addr and addr + nbytes <= a.addr + a.nbytes:
            return a
    return None


_device_id = None


def _device():
    global _device_id
    if _device_id is None:
        _device_id = _lib.shmemx_gpu_device()
    return _device_id


class DeviceArray:
    """An array on the device symmetric heap (or a view of a peer's, from get_peer_array). It holds no data on the
    host: hand it to torch (torch.from_dlpack(a), torch.as_tensor(a, device='cuda')), CuPy or Numba, which read its
    __dlpack__ / __dlpack_device__ and __cuda_array_interface__ (version 3). The interface's 'stream' names the
    stream of the last shoal operation on it (consumers on another stream wait for it), or is absent."""

    def __init__(self, addr, shape, dtype, owner=True):
        self.ptr = addr
        self.shape = tuple(shape)
        self.dtype = dtype
        self.itemsize = _DTYPES[dtype][0]
        self.size = 1
        for s in self.shape:
            self.size *= s
        self.nbytes = self.size * self.itemsize
        self.owner = owner
        self.device_id = _device()
        self._stream = None    # stream handle of the last operation enqueued on this array, or None

    def data_ptr(self):
        return self.ptr

    def __len__(self):
        return self.shape[0] if self.shape else 1

    def __repr__(self):
        return f'shoal.DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr=0x{self.ptr:x}, device={self.device_id})'

    @property
    def __cuda_array_interface__(self):
        typestr = _DTYPES[self.dtype][1]
        if typestr is None:   # AttributeError, so that hasattr() / getattr(x, name, None) consumers try DLPack
            raise AttributeError(f'shoal.DeviceArray: {self.dtype} has no __cuda_array_interface__ type: use DLPack')
        cai = {'shape': self.shape, 'typestr': typestr, 'data': (self.ptr, False), 'version': 3, 'strides': None}
        if self._stream is not None:
            cai['stream'] = self._stream if self._stream != 0 else 1  # 1: the legacy default stream (0 is invalid)
        return cai

    def __dlpack_device__(self):
        return (2, self.device_id)  # kDLCUDA

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise BufferError('shoal.DeviceArray.__dlpack__: copy=True is not supported (the data stays symmetric)')
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f'shoal.DeviceArray.__dlpack__: dl_device {dl_device} is not this array\'s device')
        # DLPack / array API for kDLCUDA: stream None means the consumer uses the legacy default stream (as 1 does;
        # 2 is the per-thread default one), -1 means "do not synchronize".
        if self._stream is not None and stream != -1:
            consumer = 0 if stream in (None, 1, 2) else stream
            if consumer != self._stream:
                _cuda_stream_sync(self._stream)
        return _dlpack_capsule(self)


# ---- CUDA helpers (only for __dlpack__ across streams) ----
_cudart = None


def _cuda_stream_sync(handle):
    """Wait on the host until the work enqueued on stream handle (0: the legacy default stream) is done: through
    torch when it is loaded (the usual consumer), else through the CUDA runtime library found by the loader."""
    global _cudart
    torch = sys.modules.get('torch')
    if torch is not None:
        st = torch.cuda.ExternalStream(handle) if handle else torch.cuda.default_stream()
        st.synchronize()
        return
    if _cudart is None:
        for name in ('libcudart.so', 'libcudart.so.13', 'libcudart.so.12'):
            try:
                _cudart = ctypes.CDLL(name)
                break
            except OSError:
                continue
        else:
            raise ShoalError('shoal.DeviceArray.__dlpack__: the consumer\'s stream differs from the one the data was '
                             'written on and no libcudart was found to wait for it')
        _cudart.cudaStreamSynchronize.argtypes = [ctypes.c_void_p]
        _cudart.cudaStreamSynchronize.restype = ctypes.c_int
    err = _cudart.cudaStreamSynchronize(handle or None)
    if err:
        raise ShoalError(f'shoal.DeviceArray.__dlpack__: cudaStreamSynchronize failed with error {err}')


# ---- DLPack (dlpack.h v0.8 ABI: DLManagedTensor in a capsule named "dltensor") ----
class _DLDevice(ctypes.Structure):
    _fields_ = [('device_type', ctypes.c_int32), ('device_id', ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [('code', ctypes.c_uint8), ('bits', ctypes.c_uint8), ('lanes', ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [('data', ctypes.c_void_p), ('device', _DLDevice), ('ndim', ctypes.c_int32),
                ('dtype', _DLDataType), ('shape', ctypes.POINTER(ctypes.c_int64)),
                ('strides', ctypes.POINTER(ctypes.c_int64)), ('byte_offset', ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DLDeleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [('dl_tensor', _DLTensor), ('manager_ctx', ctypes.c_void_p), ('deleter', _DLDeleter)]

_dl_live = {}   # id -> (managed tensor, shape array, owner array): kept alive until the consumer's deleter runs


def _dl_delete(mt_ptr):
    _dl_live.pop(mt_ptr.contents.manager_ctx or 0, None)


_dl_deleter = _DLDeleter(_dl_delete)

_PyCapsule_Destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _PyCapsule_Destructor]
_capsule_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_valid.restype = ctypes.c_int
_capsule_valid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_capsule_ptr = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_ptr.restype = ctypes.c_void_p
_capsule_ptr.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_DLTENSOR = b'dltensor'


def _capsule_destroy(cap):
    # A capsule still named "dltensor" was never consumed: its owner's deleter is ours to call. A consumer renames it
    # "used_dltensor" and calls the deleter itself when done.
    if _capsule_valid(cap, _DLTENSOR):
        mt = ctypes.cast(_capsule_ptr(cap, _DLTENSOR), ctypes.POINTER(_DLManagedTensor))
        _dl_delete(mt)


_capsule_destructor = _PyCapsule_Destructor(_capsule_destroy)
_dl_next = [1]


def _dlpack_capsule(arr):
    shape = (ctypes.c_int64 * max(len(arr.shape), 1))(*arr.shape)
    code, bits = _DTYPES[arr.dtype][2]
    key = _dl_next[0]
    _dl_next[0] += 1
    mt = _DLManagedTensor()
    dev_type, dev_id = arr.__dlpack_device__()
    mt.dl_tensor = _DLTensor(ctypes.c_void_p(arr.ptr), _DLDevice(dev_type, dev_id), len(arr.shape),
                             _DLDataType(code, bits, 1), shape, None, 0)
    mt.manager_ctx = key
    mt.deleter = _dl_deleter
    _dl_live[key] = (mt, shape, arr)
    return _capsule_new(ctypes.addressof(mt), _DLTENSOR, _capsule_destructor)


# ---- allocation ----
def array(shape, dtype='float32', device='host'):
    """A new array of shape and dtype on the symmetric heap: collective, every PE must ask for the same shape and
    dtype in the same order. device='host': shmem_malloc, returned as a numpy array over the symmetric memory.
    device='cuda': shmem_malloc_with_hints(SHMEMX_MALLOC_DEVICE), returned as a DeviceArray (DLPack and
    __cuda_array_interface__; needs a GPU: shoal.gpu_available()). The contents are undefined (see zeros).
    Raises ShoalError when the heap is exhausted (SHMEM_SYMMETRIC_SIZE / SHOAL_DEVICE_SYMMETRIC_SIZE)."""
    lib = _need('array')
    if isinstance(shape, int):
        shape = (shape,)
    try:
        shape = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise TypeError(f'shoal.array: shape: expected an int or a tuple of ints, got {shape!r}') from None
    if any(s < 0 for s in shape):
        raise ValueError(f'shoal.array: shape: {shape} has a negative extent')
    dt = _dtype_name('array', dtype)
    nbytes = _DTYPES[dt][0]
    for s in shape:
        nbytes *= s
    if device == 'host':
        if os.environ.get('SHOAL_HEAP', 'host') == 'device':
            raise ValueError('shoal.array: device=\'host\': SHOAL_HEAP=device puts shmem_malloc on the GPU; '
                             'unset it (device arrays come from device=\'cuda\')')
        addr = lib.shmem_malloc(max(nbytes, 1))
    elif device in ('cuda', 'gpu'):
        if not lib.shmemx_gpu_available():
            raise ValueError('shoal.array: device=\'cuda\': this PE has no GPU with a device symmetric heap '
                             '(shoal.gpu_available() is False)')
        addr = lib.shmem_malloc_with_hints(max(nbytes, 1), SHMEMX_MALLOC_DEVICE)
    else:
        raise ValueError(f'shoal.array: device: {device!r} is not \'host\' or \'cuda\'')
    if not addr:
        raise ShoalError(f'shoal.array: the {device} symmetric heap has no room for {nbytes} bytes')
    _allocs[addr] = _Alloc(addr, max(nbytes, 1), 'host' if device == 'host' else 'cuda')
    if device == 'host':
        return _host_view(addr, shape, dt)
    return DeviceArray(addr, shape, dt)


def _host_view(addr, shape, dt):
    import numpy as np
    count = 1
    for s in shape:
        count *= s
    nbytes = count * _DTYPES[dt][0]
    buf = (ctypes.c_char * max(nbytes, 1)).from_address(addr)
    return np.frombuffer(buf, dtype=np.dtype(dt), count=count).reshape(shape)


def zeros(shape, dtype='float32', device='host'):
    """array(shape, dtype, device) filled with zeros on every PE (ends with a barrier, so that no PE's later put can
    be overwritten by a slower PE's clearing)."""
    a = array(shape, dtype, device)
    if device == 'host':
        a[...] = 0
    elif a.nbytes:
        zero = ctypes.create_string_buffer(a.nbytes)   # shmem_putmem to the device heap copies synchronously
        _lib.shmem_putmem(a.ptr, zero, a.nbytes, my_pe())
    barrier_all()
    return a


def tensor(shape, dtype='float32'):
    """A torch tensor over the device symmetric heap (torch.from_dlpack(array(shape, dtype, 'cuda'))), as
    nvshmem4py's nvshmem.core.tensor. Free it with free_tensor (or free)."""
    import torch
    return torch.from_dlpack(array(shape, dtype, 'cuda'))


def _addr_of(routine, argname, obj):
    """(address, nbytes, dtype name, device, holder) of a numpy array, DeviceArray, torch tensor or CUDA array.
    holder owns the memory at address: the caller keeps it until the C call that uses the address returns (numpy
    scalars and other __array_interface__ objects are converted by np.asarray, which may copy them into a
    temporary that would otherwise be freed on return)."""
    if isinstance(obj, DeviceArray):
        return obj.ptr, obj.nbytes, obj.dtype, 'cuda', obj
    ai = getattr(obj, '__array_interface__', None)
    if ai is not None and not hasattr(obj, 'data_ptr'):
        import numpy as np
        if not isinstance(obj, np.ndarray):
            obj = np.asarray(obj)
        if not obj.flags['C_CONTIGUOUS']:
            raise ValueError(f'shoal.{routine}: {argname}: the array is not contiguous')
        return (obj.__array_interface__['data'][0], obj.nbytes, _typestr_name(routine, argname, obj.dtype.str),
                'host', obj)
    if hasattr(obj, 'data_ptr') and hasattr(obj, 'element_size'):   # torch.Tensor
        if not obj.is_contiguous():
            raise ValueError(f'shoal.{routine}: {argname}: the tensor is not contiguous')
        return (obj.data_ptr(), obj.numel() * obj.element_size(), _dtype_name(routine, obj.dtype),
                'cuda' if obj.is_cuda else 'host', obj)
    cai = getattr(obj, '__cuda_array_interface__', None)
    if cai is not None:
        dt = _typestr_name(routine, argname, cai['typestr'])
        n = _DTYPES[dt][0]
        for s in cai['shape']:
            n *= s
        if cai.get('strides') is not None:
            raise ValueError(f'shoal.{routine}: {argname}: the array is not contiguous (strides given)')
        return cai['data'][0], n, dt, 'cuda', obj
    if isinstance(obj, (bytes, bytearray, memoryview)):
        import numpy as np
        return _addr_of(routine, argname, np.frombuffer(obj, dtype=np.uint8))
    raise TypeError(f'shoal.{routine}: {argname}: expected a numpy array, a shoal.DeviceArray or a torch tensor, '
                    f'got {type(obj).__name__}')


def _typestr_name(routine, argname, typestr):
    name = _TYPESTR.get(typestr)
    if name is None:
        raise TypeError(f'shoal.{routine}: {argname}: dtype {typestr!r} is not supported')
    return name


def _symmetric(routine, argname, obj):
    addr, nbytes, dt, dev, _ = _addr_of(routine, argname, obj)   # a temporary copy is never symmetric
    a = _find_alloc(addr, nbytes)
    if a is None:
        raise ValueError(f'shoal.{routine}: {argname}: not a symmetric array (allocate it with shoal.array or '
                         f'shoal.zeros; a live allocation must hold all {nbytes} bytes at 0x{addr:x})')
    return addr, nbytes, dt, a.device


def free(obj):
    """Release an array from shoal.array / zeros / tensor (collective, as shmem_free: every PE frees its instance in
    the same order). Views of it and peer arrays must not be used afterwards."""
    lib = _need('free')
    addr, nbytes, _, _, _ = _addr_of('free', 'array', obj)
    a = _allocs.get(addr)
    if a is None:
        raise ValueError(f'shoal.free: array: 0x{addr:x} is not the start of a live symmetric allocation')
    del _allocs[addr]
    lib.shmem_free(addr)


free_array = free
free_tensor = free


# ---- peers ----
class _DeviceState(ctypes.Structure):
    # Mirrors shmemx_device_state_t (include/shmemx.h); shmemx_device_state_get checks the size, so a mismatch is
    # an error, never a misread.
    _fields_ = [('size', ctypes.c_uint32), ('my_pe', ctypes.c_int32), ('n_pes', ctypes.c_int32),
                ('pes_per_gpu', ctypes.c_int32), ('heap_base', ctypes.c_void_p), ('heap_size', ctypes.c_uint64),
                ('peer_delta', ctypes.c_void_p), ('bar_flags', ctypes.c_void_p), ('bar_epoch', ctypes.c_void_p),
                ('grid_bar', ctypes.c_void_p), ('team_world', ctypes.c_void_p), ('team_shared', ctypes.c_void_p),
                ('teams', ctypes.c_void_p), ('team_pool', ctypes.c_uint64), ('team_stride', ctypes.c_uint32),
                ('team_count', ctypes.c_uint32), ('delta', ctypes.c_int64 * SHMEMX_DEVICE_MAX_PES),
                ('proxy_queue', ctypes.c_void_p)]


def _device_state(routine):
    st = _DeviceState()
    st.size = ctypes.sizeof(st)
    if _lib.shmemx_device_state_get(ctypes.byref(st), ctypes.sizeof(st)) != 0:
        raise ShoalError(f'shoal.{routine}: shmemx_device_state_get failed (no GPU, or more than '
                         f'{SHMEMX_DEVICE_MAX_PES} PEs)')
    return st


def _check_pe(routine, pe, n=None):
    if n is None:
        n = _lib.shmem_n_pes()
    if not isinstance(pe, int) or isinstance(pe, bool):
        raise TypeError(f'shoal.{routine}: pe: expected an int, got {type(pe).__name__}')
    if pe < 0 or pe >= n:
        raise ValueError(f'shoal.{routine}: pe: {pe} out of range [0, {n})')


def peer_ptrs(obj):
    """The base table of a symmetric array: a list of n_pes() addresses, entry p being where PE p's instance of obj
    is mapped in this process (load/store reachable), or 0 where it is not (another node). Host arrays: shmem_ptr;
    device arrays: the device heap's per-peer deltas (shmemx_device_state_get), as torch's symmetric memory
    buffer_ptrs."""
    lib = _need('peer_ptrs')
    addr, _, _, dev = _symmetric('peer_ptrs', 'array', obj)
    n = lib.shmem_n_pes()
    if dev == 'host':
        return [lib.shmem_ptr(addr, p) or 0 for p in range(n)]
    st = _device_state('peer_ptrs')
    far = -(1 << 63)  # SHMEMX_DEVICE_DELTA_FAR: another node, no mapping here
    return [0 if st.delta[p] == far else addr + st.delta[p] for p in range(n)]


def get_peer_array(obj, pe):
    """PE pe's instance of the symmetric array obj, mapped in this process (load/store, no copy): a numpy array for
    host arrays, a DeviceArray for device arrays. Raises ValueError where pe's memory is not mapped here (another
    node)."""
    lib = _need('get_peer_array')
    _check_pe('get_peer_array', pe)
    addr, nbytes, dt, dev = _symmetric('get_peer_array', 'array', obj)
    shape = tuple(getattr(obj, 'shape', (nbytes // _DTYPES[dt][0],)))
    p = peer_ptrs(obj)[pe]
    if not p:
        raise ValueError(f'shoal.get_peer_array: pe: PE {pe}\'s memory is not mapped on this PE (another node)')
    if dev == 'host':
        return _host_view(p, shape, dt)
    return DeviceArray(p, shape, dt, owner=False)


# ---- streams ----
def _stream_handle(routine, stream):
    if stream is None:
        return None
    if hasattr(stream, 'cuda_stream'):
        stream = stream.cuda_stream
    elif hasattr(stream, 'ptr') and not isinstance(stream, int):   # cupy streams
        stream = stream.ptr
    if not isinstance(stream, int) or isinstance(stream, bool) or stream < 0:
        raise TypeError(f'shoal.{routine}: stream: expected a cudaStream_t as int or an object with .cuda_stream '
                        f'(torch.cuda.Stream), got {stream!r}')
    return stream or None


def _mark(stream, *arrays):
    for a in arrays:
        if isinstance(a, DeviceArray):
            a._stream = stream or 0


# ---- RMA ----
def put(dest, source, pe, stream=None):
    """Copy source (any contiguous buffer: numpy array, bytes, device array) into the symmetric array dest on PE
    pe: shmem_putmem (complete at quiet / barrier_all), or with a device dest shmemx_putmem_on_stream (stream
    ordered). source may be shorter than dest (its bytes go to dest's start), never longer."""
    lib = _need('put')
    _check_pe('put', pe)
    daddr, dbytes, _, ddev = _symmetric('put', 'dest', dest)
    saddr, sbytes, _, sdev, sholder = _addr_of('put', 'source', source)   # sholder: alive until the copy is done
    if sbytes > dbytes:
        raise ValueError(f'shoal.put: source: {sbytes} bytes do not fit in dest ({dbytes} bytes)')
    if sdev == 'host' and stream is None:   # to either heap: the device heap's put path copies synchronously
        lib.shmem_putmem(daddr, saddr, sbytes, pe)
    else:
        s = _stream_handle('put', stream)
        lib.shmemx_putmem_on_stream(daddr, saddr, sbytes, pe, s)
        _mark(s, dest, source)


def get(dest, source, pe, stream=None):
    """Copy the symmetric array source of PE pe into dest (any contiguous writable buffer): shmem_getmem (complete
    on return), or with a device source shmemx_getmem_on_stream. dest may be shorter than source, never longer."""
    lib = _need('get')
    _check_pe('get', pe)
    saddr, sbytes, _, sdev = _symmetric('get', 'source', source)
    daddr, dbytes, _, ddev, dholder = _addr_of('get', 'dest', dest)   # dholder: alive until the copy is done
    if dbytes > sbytes:
        raise ValueError(f'shoal.get: dest: {dbytes} bytes are more than source holds ({sbytes} bytes)')
    try:   # bytes, read-only memoryviews and arrays, numpy scalars: shmem_getmem would write into immutable memory
        readonly = memoryview(dest).readonly
    except TypeError:   # no buffer protocol (torch tensors, DeviceArray, other __array_interface__ objects)
        readonly = getattr(dholder, 'flags', None) is not None and not dholder.flags['WRITEABLE']
    if readonly:
        raise ValueError(f'shoal.get: dest: a read-only {type(dest).__name__}: pass a writable buffer (a numpy '
                         f'array, bytearray, writable memoryview)')
    if ddev == 'host' and stream is None:
        lib.shmem_getmem(daddr, saddr, dbytes, pe)
    else:
        s = _stream_handle('get', stream)
        lib.shmemx_getmem_on_stream(daddr, saddr, dbytes, pe, s)
        _mark(s, dest, source)


# ---- collectives ----
def _coll_args(routine, team, dst, src):
    lib = _need(routine)
    t = _team(routine, team)
    n = lib.shmem_team_n_pes(t)
    if n < 1:
        raise ValueError(f'shoal.{routine}: team: this PE is not a member of team {t:#x}')
    daddr, dbytes, ddt, ddev = _symmetric(routine, 'dst', dst)
    saddr, sbytes, sdt, sdev = _symmetric(routine, 'src', src)
    if ddt != sdt:
        raise TypeError(f'shoal.{routine}: dst: dtype {ddt} differs from src\'s {sdt}')
    if ddev != sdev:
        raise ValueError(f'shoal.{routine}: dst: on the {ddev} heap, src on the {sdev} heap (both must be on one)')
    if daddr < saddr + sbytes and saddr < daddr + dbytes and not (routine == 'reduce' and daddr == saddr):
        raise ValueError(f'shoal.{routine}: dst: overlaps src' + (' (only exactly in place is allowed)'
                                                                   if routine == 'reduce' else ''))
    return lib, t, n, daddr, dbytes, saddr, sbytes, ddt, ddev


def fcollect(team, dst, src, stream=None):
    """dst = the src of every member of team, in team order (shmem_fcollectmem; with device arrays
    shmemx_fcollectmem_on_stream on stream). Collective over team. dst must hold team_n_pes(team) times src's
    bytes; both symmetric, same dtype."""
    lib, t, n, daddr, dbytes, saddr, sbytes, _, dev = _coll_args('fcollect', team, dst, src)
    if dbytes != n * sbytes:
        raise ValueError(f'shoal.fcollect: dst: {dbytes} bytes, expected {n} x {sbytes} (team size x src bytes)')
    if dev == 'host' and stream is None:
        rc = lib.shmem_fcollectmem(t, daddr, saddr, sbytes)
    else:
        s = _stream_handle('fcollect', stream)
        rc = lib.shmemx_fcollectmem_on_stream(t, daddr, saddr, sbytes, s)
        _mark(s, dst)
    if rc:
        raise ShoalError(f'shoal.fcollect: shmem_fcollectmem returned {rc}')


def alltoall(team, dst, src, stream=None):
    """Block j of src (its bytes / team size) goes to block (this PE's team number) of dst on member j
    (shmem_alltoallmem; with device arrays shmemx_alltoallmem_on_stream). Collective over team. dst and src: the
    same size, a multiple of the team size in elements; symmetric, same dtype."""
    lib, t, n, daddr, dbytes, saddr, sbytes, dt, dev = _coll_args('alltoall', team, dst, src)
    if dbytes != sbytes:
        raise ValueError(f'shoal.alltoall: dst: {dbytes} bytes differ from src\'s {sbytes}')
    if sbytes % (n * _DTYPES[dt][0]):
        raise ValueError(f'shoal.alltoall: src: {sbytes} bytes do not split into {n} blocks of whole elements')
    blk = sbytes // n
    if dev == 'host' and stream is None:
        rc = lib.shmem_alltoallmem(t, daddr, saddr, blk)
    else:
        s = _stream_handle('alltoall', stream)
        rc = lib.shmemx_alltoallmem_on_stream(t, daddr, saddr, blk, s)
        _mark(s, dst)
    if rc:
        raise ShoalError(f'shoal.alltoall: shmem_alltoallmem returned {rc}')


_reduce_fns = {}


def _reduce_fn(name):
    f = _reduce_fns.get(name)
    if f is None:
        f = getattr(_lib, name)
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t] + \
            ([ctypes.c_void_p] if name.endswith('_on_stream') else [])
        _reduce_fns[name] = f
    return f


def reduce(team, dst, src, op='sum', stream=None):
    """dst[i] = src[i] op over every member of team, on every member (an all-reduce): shmem_TYPE_OP_reduce on
    host arrays, shmemx_TYPE_OP_reduce_on_stream on device arrays (float16 and bfloat16 there too). op: 'sum',
    'prod', 'min', 'max'. dst and src: symmetric, same dtype and size; dst may be src (in place)."""
    lib, t, n, daddr, dbytes, saddr, sbytes, dt, dev = _coll_args('reduce', team, dst, src)
    if not isinstance(op, str) or op.lower() not in _ARITH:
        raise ValueError(f'shoal.reduce: op: {op!r} is not one of {", ".join(_ARITH)}')
    op = op.lower()
    if dbytes != sbytes:
        raise ValueError(f'shoal.reduce: dst: {dbytes} bytes differ from src\'s {sbytes}')
    tname = _DTYPES[dt][3]
    if tname is None or op not in _DTYPES[dt][4] or (dev == 'host' and dt in ('float16', 'bfloat16')):
        raise TypeError(f'shoal.reduce: src: dtype {dt} has no {op} reduction' +
                        (' on the host heap (device arrays have one)' if dt in ('float16', 'bfloat16') else ''))
    nelems = sbytes // _DTYPES[dt][0]
    if dev == 'host' and stream is None:
        rc = _reduce_fn(f'shmem_{tname}_{op}_reduce')(t, daddr, saddr, nelems)
    else:
        s = _stream_handle('reduce', stream)
        rc = _reduce_fn(f'shmemx_{tname}_{op}_reduce_on_stream')(t, daddr, saddr, nelems, s)
        _mark(s, dst)
    if rc:
        raise ShoalError(f'shoal.reduce: shmem_{tname}_{op}_reduce returned {rc}')


def allreduce(team, dst, src, op='sum', stream=None):
    """Same as reduce (every member gets the result), the name torch.distributed users look for."""
    reduce(team, dst, src, op, stream)
