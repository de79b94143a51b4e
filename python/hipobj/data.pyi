# SPDX-License-Identifier: MIT
from typing import (Any, Callable, Iterator, List, Mapping, Optional,
                    Sequence, Tuple)

from ._core import Client

# a sample before the transform: (key, a torch.uint8 tensor or NumPy array)
Sample = Tuple[str, Any]

class _Reader:
    bucket: str
    prefix: str
    objects: List[Tuple[str, Optional[int]]]
    def __init__(self, url: str,
                 transform: Optional[Callable[[Sample], Any]] = None, *,
                 endpoint_url: Optional[str] = None,
                 key: Optional[str] = None, secret: Optional[str] = None,
                 token: Optional[str] = None, region: Optional[str] = None,
                 anon: bool = False, use_env: bool = True,
                 client_kwargs: Optional[Mapping[str, Any]] = None,
                 framework: str = "torch", device: Any = "cpu",
                 reuse: bool = False, pin_memory: bool = False,
                 keys: Optional[Sequence[str]] = None) -> None: ...
    @property
    def client(self) -> Client: ...

class MapDataset(_Reader):
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Any: ...

class IterableDataset(_Reader):
    record_size: Optional[int]
    read_size: int
    def __init__(self, url: str,
                 transform: Optional[Callable[[Sample], Any]] = None, *,
                 record_size: Optional[int] = None, read_size: int = ...,
                 shuffle_seed: Optional[int] = None, **kw: Any) -> None: ...
    def __iter__(self) -> Iterator[Any]: ...
