"""Java arithmetic and string semantics that a bit-exact port of RocketMQ needs.

Spec: ``reference/rocketmq-load-balancing.md`` section 0 ("Numeric conventions") and section 10
("Porting notes"). Upstream code is Java: ``int`` wraps at 32 bits, ``%`` truncates toward zero,
``Math.abs(Integer.MIN_VALUE)`` stays negative, and ``String.compareTo`` / ``String.hashCode`` work
on UTF-16 code units. Python's ``int``, ``%``, ``abs`` and ``str`` ordering all differ, so every
module of the core goes through these helpers.

``JavaHashMap`` is the iteration order of OpenJDK's ``HashMap`` and ``HashSet``, which Kafka's
assignors depend on; copies and ``putAll`` are sized as the ``jvm`` argument's release sizes them
(17, or 19 and later). ``tests/test_javamath.py`` checks it against Java 17 and 25, where
installed, through ``kafka/java/HashMapOrder.java``.

>>> wrap32(2**31)
-2147483648
>>> jmod(-7, 3), -7 % 3
(-1, 2)
>>> jabs(-2**31)
-2147483648
>>> mask31(-2**31)
0
>>> java_string_hash("RocketMQ")
-453554280
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

INT_MIN = -(2**31)
INT_MAX = 2**31 - 1
_MASK32 = 0xFFFFFFFF


def wrap32(x: int) -> int:
    """Wrap an integer to Java's signed 32-bit ``int`` (two's complement)."""
    x &= _MASK32
    return x - (1 << 32) if x >= (1 << 31) else x


def wrap64(x: int) -> int:
    """Wrap an integer to Java's signed 64-bit ``long``."""
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >= (1 << 63) else x


def jabs(x: int) -> int:
    """``Math.abs(int)``: the absolute value, except that ``Integer.MIN_VALUE`` stays negative."""
    x = wrap32(x)
    return x if x >= 0 or x == INT_MIN else -x


def jmod(a: int, b: int) -> int:
    """Java's ``a % b`` for ints: the remainder truncates toward zero (its sign follows ``a``).

    Raises ``ZeroDivisionError`` for ``b == 0``, as Java raises ``ArithmeticException``.
    """
    if b == 0:
        raise ZeroDivisionError("/ by zero")
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def jdiv(a: int, b: int) -> int:
    """Java's integer division ``a / b`` (truncates toward zero)."""
    if b == 0:
        raise ZeroDivisionError("/ by zero")
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def mask31(x: int) -> int:
    """``x & 0x7FFFFFFF``: clear the sign bit of a 32-bit value."""
    return x & 0x7FFFFFFF


def java_string_key(s: str) -> bytes:
    """A sort key giving Java's ``String.compareTo`` order (UTF-16 code units).

    Python orders ``str`` by code point; Java by UTF-16 code unit. They differ when a character
    above U+FFFF (a surrogate pair, units D800..DFFF) meets one in U+E000..U+FFFF. Big-endian UTF-16
    bytes compare exactly like the code-unit sequence, prefix rule included.

    >>> sorted(["\\uff21", "\\U0001f600"]) == ["\\uff21", "\\U0001f600"]
    True
    >>> sorted(["\\uff21", "\\U0001f600"], key=java_string_key) == ["\\U0001f600", "\\uff21"]
    True
    """
    return s.encode("utf-16-be", "surrogatepass")


def java_string_compare(a: str, b: str) -> int:
    """The sign of Java's ``a.compareTo(b)``: -1, 0 or 1."""
    ka, kb = java_string_key(a), java_string_key(b)
    return (ka > kb) - (ka < kb)


def utf16_units(s: str) -> list[int]:
    """The UTF-16 code units of ``s``, as Java's ``String.charAt`` sees them."""
    raw = java_string_key(s)
    return [(raw[i] << 8) | raw[i + 1] for i in range(0, len(raw), 2)]


@functools.lru_cache(maxsize=1 << 16)
def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode``: ``h = 31*h + unit`` over UTF-16 code units, 32-bit wrap
    (remembered for the last 65,536 strings: Kafka's assignors hash the same topic and member
    names many times)."""
    h = 0
    for unit in utf16_units(s):
        h = (31 * h + unit) & _MASK32
    return wrap32(h)


JAVA_HASHMAP_TREEIFY = 8
"""``HashMap.TREEIFY_THRESHOLD``: a bin reaching this many entries is turned into a red-black
tree (``treeifyBin``), or the table resized while it has fewer than ``JAVA_HASHMAP_MIN_TREEIFY``
buckets. ``put`` treeifies when the ninth entry goes in, ``computeIfAbsent`` the eighth."""
JAVA_HASHMAP_UNTREEIFY = 6
"""``HashMap.UNTREEIFY_THRESHOLD``: a tree bin split by a resize into a half this small becomes
a list again."""
JAVA_HASHMAP_MIN_TREEIFY = 64
"""``HashMap.MIN_TREEIFY_CAPACITY``."""


JAVA_RESIZED_COPIES = 19
"""The first Java whose ``HashMap`` copy constructor, ``putAll`` and ``HashSet`` copy constructor
size their table by ``HashMap.calculateHashMapCapacity`` (``ceil(n / 0.75)``, JDK-8281631)
instead of ``n / 0.75 + 1``: ``jvm`` arguments below it behave as OpenJDK 17, the rest as 19 and
later (21, 25)."""


def java_copy_threshold(size: int, *, jvm: int = 17, hash_set: bool = False) -> int:
    """The initial capacity a copy of ``size`` keys asks for (the value ``tableSizeFor`` then
    rounds up): ``new HashSet<>(collection)`` (``hash_set``) or ``HashMap.putMapEntries``
    (``new HashMap<>(map)``, ``putAll`` into an empty table).

    - Java 17: ``HashSet``: ``max((int) (size / .75f) + 1, 16)``; ``putMapEntries``:
      ``(int) (size / 0.75f + 1.0f)``;
    - Java 19 and later: ``HashSet``: ``calculateHashMapCapacity(max(size, 12))``;
      ``putMapEntries``: ``(int) ceil(size / 0.75)``.

    Exact integer arithmetic (``4 * size / 3``), which is what Java's ``float`` computes below
    2**22 keys.

    >>> java_copy_threshold(12, hash_set=True), java_copy_threshold(12, jvm=25, hash_set=True)
    (17, 16)
    >>> java_copy_threshold(6), java_copy_threshold(6, jvm=25)
    (9, 8)
    """
    if jvm < JAVA_RESIZED_COPIES:
        return max(4 * size // 3 + 1, 16) if hash_set else 4 * size // 3 + 1
    if hash_set:
        size = max(size, 12)
    return -(-4 * size // 3)


def java_spread(h: int) -> int:
    """``HashMap.hash``: ``h ^ (h >>> 16)`` of a ``hashCode``, as a signed ``int``."""
    h &= _MASK32
    return wrap32(h ^ (h >> 16))


def java_table_size_for(cap: int) -> int:
    """``HashMap.tableSizeFor``: the power of two at or above ``cap`` (at least 1)."""
    n = 1
    while n < cap:
        n <<= 1
    return n


class _TreeNode:
    """``HashMap.TreeNode``: a bin entry of a treeified bin (red-black tree links, and the
    ``next``/``prev`` list that iteration follows)."""

    __slots__ = ("hash", "key", "left", "next", "parent", "prev", "red", "right")

    def __init__(self, h: int, key: object) -> None:
        self.hash = h
        self.key = key
        self.parent: _TreeNode | None = None
        self.left: _TreeNode | None = None
        self.right: _TreeNode | None = None
        self.prev: _TreeNode | None = None
        self.next: _TreeNode | None = None
        self.red = False


_OTHER = {"left": "right", "right": "left"}


def _rotate(root: _TreeNode, p: _TreeNode, side: str) -> _TreeNode:
    """``TreeNode.rotateLeft`` (``side`` "left") or ``rotateRight`` ("right"): ``p``'s child on
    the other side takes its place, ``p`` becoming that child's child on ``side``."""
    other = _OTHER[side]
    r: _TreeNode | None = getattr(p, other)
    if r is not None:
        rl = getattr(r, side)
        setattr(p, other, rl)
        if rl is not None:
            rl.parent = p
        pp = r.parent = p.parent
        if pp is None:
            root = r
            r.red = False
        elif getattr(pp, side) is p:
            setattr(pp, side, r)
        else:
            setattr(pp, other, r)
        setattr(r, side, p)
        p.parent = r
    return root


def _is_black(n: _TreeNode | None) -> bool:
    return n is None or not n.red


def _balance_insertion(root: _TreeNode, x: _TreeNode) -> _TreeNode:
    """``TreeNode.balanceInsertion`` (CLR's red-black insertion, as OpenJDK writes it; its two
    mirror-image branches as one, ``side``: the side of its grandparent ``x``'s parent is on)."""
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        side = "left" if xp is xpp.left else "right"
        other = _OTHER[side]
        uncle: _TreeNode | None = getattr(xpp, other)
        if uncle is not None and uncle.red:
            uncle.red = False
            xp.red = False
            xpp.red = True
            x = xpp
            continue
        if x is getattr(xp, other):
            x = xp
            root = _rotate(root, x, side)
            xp = x.parent
            xpp = None if xp is None else xp.parent
        if xp is not None:
            xp.red = False
            if xpp is not None:
                xpp.red = True
                root = _rotate(root, xpp, other)


def _balance_deletion(root: _TreeNode, x: _TreeNode | None) -> _TreeNode:
    """``TreeNode.balanceDeletion`` (CLR's red-black deletion, as OpenJDK writes it; its two
    mirror-image branches as one, ``side``: the side of its parent ``x`` is on)."""
    while True:
        if x is None or x is root:
            return root
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        if x.red:
            x.red = False
            return root
        side = "left" if xp.left is x else "right"
        other = _OTHER[side]
        sibling: _TreeNode | None = getattr(xp, other)
        if sibling is not None and sibling.red:
            sibling.red = False
            xp.red = True
            root = _rotate(root, xp, side)
            xp = x.parent
            sibling = None if xp is None else getattr(xp, other)
        if sibling is None:
            x = xp
            continue
        near, far = getattr(sibling, side), getattr(sibling, other)
        if _is_black(far) and _is_black(near):
            sibling.red = True
            x = xp
            continue
        if _is_black(far):
            if near is not None:
                near.red = False
            sibling.red = True
            root = _rotate(root, sibling, other)
            xp = x.parent
            sibling = None if xp is None else getattr(xp, other)
        if sibling is not None:
            sibling.red = False if xp is None else xp.red
            far = getattr(sibling, other)
            if far is not None:
                far.red = False
        if xp is not None:
            xp.red = False
            root = _rotate(root, xp, side)
        x = root


class JavaHashMap:
    """The keys of a ``java.util.HashMap`` (OpenJDK 17, load factor 0.75) in the order it
    iterates them (``keySet``, ``entrySet``, ``values``; a ``HashSet`` is one of these), after a
    sequence of ``put``, ``computeIfAbsent`` and ``remove`` calls (``HashSet.add`` is ``put``).

    Modelled exactly: the table (16 buckets by default, or ``tableSizeFor(initial_capacity)``),
    a key's bucket ``(h ^ h >>> 16) & (n - 1)``; ``put`` appends a new key to its bin and
    resizes *after* inserting when the size passes the threshold, ``computeIfAbsent`` resizes
    at the *start* of a call that finds the size already past it and puts a new key at the
    front of its bin; a resize splits each bin keeping its order; a bin reaching
    ``JAVA_HASHMAP_TREEIFY`` entries (``put``: the ninth; ``computeIfAbsent``: the eighth)
    resizes the table while it has fewer than 64 buckets, else becomes a red-black tree
    (``treeifyBin``), whose iteration order is its ``next`` links: the list order at
    treeification with the root moved to the front, each later key linked right after its tree
    parent (``putTreeVal``), the root moved to the front after every rebalancing; a resize
    splits a tree bin in order and makes a half of at most 6 a list again, re-treeifying a
    larger half; ``remove`` unlinks a key from its bin's list, makes a tree bin whose tree has
    become too small a list again, and otherwise deletes it from the tree (``removeTreeNode``,
    the root moved to the front again).

    A tree orders keys by spread hash, then, for keys of the same ``Comparable`` class, by
    ``compareTo`` (``compare(a, b)``; ``None`` when the two are not mutually comparable), then
    by ``System.identityHashCode``, which no program can reproduce: that last step is reached
    only by distinct keys with equal hash codes that ``compare`` does not order (never for
    ``String`` keys); there the model takes the new key as the smaller one and sets
    ``undefined`` (the order Java prints then may differ from run to run).

    ``hash``: the key's ``hashCode`` (default: ``String.hashCode``); ``compare``: default
    ``String.compareTo``'s sign. Keys are compared for equality with ``==``.

    >>> m = JavaHashMap()
    >>> for k in ["b", "a", "c"]:
    ...     m.put(k)
    True
    True
    True
    >>> m.keys(), m.capacity
    (['a', 'b', 'c'], 16)
    """

    __slots__ = ("_compare", "_hash_of", "_spread", "_table", "size", "threshold", "undefined")

    def __init__(self, initial_capacity: int | None = None, *,
                 hash: Callable[[Any], int] | None = None,
                 compare: Callable[[Any, Any], int | None] | None = None) -> None:
        self._hash_of: Callable[[Any], int] = hash or java_string_hash
        self._compare: Callable[[Any, Any], int | None] = compare or java_string_compare
        # a bin: None, a list of keys (a plain bin, in ``next`` order), or its first _TreeNode
        self._table: list[Any] = []
        self._spread: dict[Any, int] = {}
        self.size = 0
        self.threshold = 0 if initial_capacity is None else java_table_size_for(initial_capacity)
        self.undefined = False

    @property
    def capacity(self) -> int:
        """The table's length (0 before the first insertion)."""
        return len(self._table)

    def __len__(self) -> int:
        return self.size

    def __contains__(self, key: object) -> bool:
        return key in self._spread

    # ------------------------------------------------------------- the two insertions

    def put(self, key: Any) -> bool:
        """``HashMap.put`` (``putVal``): True when ``key`` was new."""
        if key in self._spread:
            return False
        h = java_spread(self._hash_of(key))
        if not self._table:
            self._resize()
        # binCount >= TREEIFY_THRESHOLD - 1 counts the entries before the new one, appended
        self._insert(key, h, front=False, treeify_at=JAVA_HASHMAP_TREEIFY + 1)
        if self.size > self.threshold:
            self._resize()
        return True

    def compute_if_absent(self, key: Any) -> bool:
        """``HashMap.computeIfAbsent`` with a function that returns a value: True when ``key``
        was new."""
        if self.size > self.threshold or not self._table:
            self._resize()
        if key in self._spread:
            return False
        h = java_spread(self._hash_of(key))
        # binCount >= TREEIFY_THRESHOLD - 1 counts the entries already there; the new one
        # goes first
        self._insert(key, h, front=True, treeify_at=JAVA_HASHMAP_TREEIFY)
        return True

    def _insert(self, key: Any, h: int, *, front: bool, treeify_at: int) -> None:
        """A new key into its bin: a tree bin's ``putTreeVal``, else the front or the end of
        the list, treeified once it holds ``treeify_at`` keys."""
        tab = self._table
        i = (len(tab) - 1) & h
        self._spread[key] = h
        first = tab[i]
        if first is None:
            tab[i] = [key]
        elif isinstance(first, _TreeNode):
            self._put_tree_val(first, h, key)
        else:
            if front:
                first.insert(0, key)
            else:
                first.append(key)
            if len(first) >= treeify_at:
                self._treeify_bin(h)
        self.size += 1

    @classmethod
    def copy_of(cls, keys: Iterable[Any], *, jvm: int = 17, hash_set: bool = True,
                hash: Callable[[Any], int] | None = None,
                compare: Callable[[Any, Any], int | None] | None = None) -> JavaHashMap:
        """A copy of a collection whose iteration order is ``keys`` (distinct): ``new
        HashSet<>(collection)`` (``hash_set``) or ``new HashMap<>(map)`` (``putMapEntries``),
        each sized as the ``jvm`` sizes it (``java_copy_threshold``), then filled by ``put`` in
        that order.

        >>> ids = [f"t{i}" for i in range(12)]
        >>> JavaHashMap.copy_of(ids).capacity, JavaHashMap.copy_of(ids, jvm=25).capacity
        (32, 16)
        """
        keys = list(keys)
        m = cls(hash=hash, compare=compare)
        if keys or hash_set:
            m.threshold = java_table_size_for(java_copy_threshold(len(keys), jvm=jvm,
                                                                  hash_set=hash_set))
        for k in keys:
            m.put(k)
        return m

    def put_all(self, keys: Iterable[Any], *, jvm: int = 17) -> None:
        """``HashMap.putAll`` of a map whose iteration order is ``keys`` (``putMapEntries``): an
        empty table is pre-sized as the ``jvm`` sizes copies; a table already there doubles
        while the other map's size passes its threshold; then each key is ``put``."""
        keys = list(keys)
        if not keys:
            return
        if not self._table:
            t = java_copy_threshold(len(keys), jvm=jvm)
            if t > self.threshold:
                self.threshold = java_table_size_for(t)
        else:
            while len(keys) > self.threshold and len(self._table) < 1 << 30:
                self._resize()
        for k in keys:
            self.put(k)

    def remove(self, key: Any, *, movable: bool = True) -> bool:
        """``HashMap.remove`` (``removeNode``): True when ``key`` was there. ``movable``: False
        for a removal through an iterator (``HashIterator.remove``), which leaves a tree bin's
        root where it is."""
        h = self._spread.pop(key, None)
        if h is None:
            return False
        tab = self._table
        index = (len(tab) - 1) & h
        first = tab[index]
        if isinstance(first, _TreeNode):
            node: _TreeNode | None = first
            while node is not None and node.key != key:
                node = node.next
            assert node is not None
            self._remove_tree_node(node, movable)
        else:
            first.remove(key)
            if not first:
                tab[index] = None
        self.size -= 1
        return True

    def keys(self) -> list[Any]:
        """The keys in iteration order."""
        out: list[Any] = []
        for b in self._table:
            if b is None:
                continue
            if isinstance(b, _TreeNode):
                node: _TreeNode | None = b
                while node is not None:
                    out.append(node.key)
                    node = node.next
            else:
                out.extend(b)
        return out

    def __iter__(self) -> Iterator[Any]:
        return iter(self.keys())

    def first(self) -> Any:
        """The first key in iteration order (``iterator().next()``); ``None`` when empty."""
        for b in self._table:
            if b is None:
                continue
            return b.key if isinstance(b, _TreeNode) else b[0]
        return None

    def state(self) -> tuple[object, ...]:
        """Everything the map's future orders depend on: its threshold and each bin, a list's
        keys or a tree's nodes in ``next`` order with their links and colours."""
        bins: list[object] = []
        for b in self._table:
            if isinstance(b, _TreeNode):
                nodes = []
                node: _TreeNode | None = b
                while node is not None:
                    nodes.append((node.key, node.red, *(None if n is None else n.key for n in
                                                        (node.parent, node.left, node.right))))
                    node = node.next
                bins.append(tuple(nodes))
            else:
                bins.append(None if b is None else tuple(b))
        return (self.threshold, tuple(bins))

    def tree_bins(self) -> int:
        """How many bins are red-black trees now."""
        return sum(isinstance(b, _TreeNode) for b in self._table)

    # ------------------------------------------------------------- the table

    def _resize(self) -> None:
        """``HashMap.resize``."""
        old = self._table
        old_cap, old_thr = len(old), self.threshold
        new_thr = 0
        if old_cap > 0:
            new_cap = old_cap << 1
            if old_cap >= 16:
                new_thr = old_thr << 1
        elif old_thr > 0:
            new_cap = old_thr
        else:
            new_cap, new_thr = 16, 12
        if new_thr == 0:
            new_thr = int(new_cap * 0.75)
        self.threshold = new_thr
        tab: list[Any] = [None] * new_cap
        self._table = tab
        spread = self._spread
        for j, b in enumerate(old):
            if b is None:
                continue
            if isinstance(b, _TreeNode):
                if b.next is None:
                    tab[b.hash & (new_cap - 1)] = b
                else:
                    self._split(b, j, old_cap)
                continue
            if len(b) == 1:
                tab[spread[b[0]] & (new_cap - 1)] = b
                continue
            lo = [k for k in b if not spread[k] & old_cap]
            hi = [k for k in b if spread[k] & old_cap]
            if lo:
                tab[j] = lo
            if hi:
                tab[j + old_cap] = hi

    def _treeify_bin(self, h: int) -> None:
        """``HashMap.treeifyBin``."""
        tab = self._table
        if len(tab) < JAVA_HASHMAP_MIN_TREEIFY:
            self._resize()
            return
        index = (len(tab) - 1) & h
        keys = tab[index]
        head = tail = None
        for k in keys:
            node = _TreeNode(self._spread[k], k)
            if tail is None:
                head = node
            else:
                node.prev = tail
                tail.next = node
            tail = node
        tab[index] = head
        assert head is not None
        self._treeify(head)

    def _dir(self, h: int, k: Any, p: _TreeNode) -> int:
        """The comparison ``treeify`` and ``putTreeVal`` make of a new key with a tree node."""
        if p.hash > h:
            return -1
        if p.hash < h:
            return 1
        d = self._compare(k, p.key)
        if d:
            return -1 if d < 0 else 1
        # tieBreakOrder: System.identityHashCode, which no model can know
        self.undefined = True
        return -1

    def _treeify(self, head: _TreeNode) -> None:
        """``TreeNode.treeify`` of the list starting at ``head``."""
        root: _TreeNode | None = None
        x: _TreeNode | None = head
        while x is not None:
            nxt: _TreeNode | None = x.next
            x.left = x.right = None
            if root is None:
                x.parent = None
                x.red = False
                root = x
            else:
                p: _TreeNode | None = root
                while p is not None:
                    d = self._dir(x.hash, x.key, p)
                    xp = p
                    p = p.left if d <= 0 else p.right
                    if p is None:
                        x.parent = xp
                        if d <= 0:
                            xp.left = x
                        else:
                            xp.right = x
                        root = _balance_insertion(root, x)
                        break
            x = nxt
        assert root is not None
        self._move_root_to_front(root)

    def _move_root_to_front(self, root: _TreeNode) -> None:
        """``TreeNode.moveRootToFront``."""
        tab = self._table
        index = (len(tab) - 1) & root.hash
        first = tab[index]
        if root is not first:
            tab[index] = root
            rp = root.prev
            rn = root.next
            if rn is not None:
                rn.prev = rp
            if rp is not None:
                rp.next = rn
            if first is not None:
                first.prev = root
            root.next = first
            root.prev = None

    def _put_tree_val(self, first: _TreeNode, h: int, k: Any) -> None:
        """``TreeNode.putTreeVal`` for a key not in the tree (``first`` is its root)."""
        root = first
        while root.parent is not None:
            root = root.parent
        p: _TreeNode | None = root
        while p is not None:
            d = self._dir(h, k, p)
            xp = p
            p = p.left if d <= 0 else p.right
            if p is None:
                xpn = xp.next
                x = _TreeNode(h, k)
                x.next = xpn
                if d <= 0:
                    xp.left = x
                else:
                    xp.right = x
                xp.next = x
                x.parent = x.prev = xp
                if xpn is not None:
                    xpn.prev = x
                self._move_root_to_front(_balance_insertion(root, x))
                return

    def _remove_tree_node(self, p: _TreeNode, movable: bool) -> None:
        """``TreeNode.removeTreeNode``: unlink ``p`` from its bin's list, make the bin a list
        again when its tree is too small, else delete ``p`` from the tree."""
        tab = self._table
        index = (len(tab) - 1) & p.hash
        first: _TreeNode | None = tab[index]
        root = first
        succ, pred = p.next, p.prev
        if pred is None:
            tab[index] = first = succ
        else:
            pred.next = succ
        if succ is not None:
            succ.prev = pred
        if first is None:
            tab[index] = None
            return
        assert root is not None
        while root.parent is not None:
            root = root.parent
        if movable and (root.right is None or root.left is None or root.left.left is None):
            keys = []
            node: _TreeNode | None = first
            while node is not None:
                keys.append(node.key)
                node = node.next
            tab[index] = keys                                # untreeify: too small
            return
        pl, pr = p.left, p.right
        if pl is not None and pr is not None:
            sn = pr
            while sn.left is not None:                       # the successor
                sn = sn.left
            sn.red, p.red = p.red, sn.red
            sr = sn.right
            pp = p.parent
            if sn is pr:
                p.parent = sn
                sn.right = p
            else:
                sp = sn.parent
                p.parent = sp
                if sp is not None:
                    if sn is sp.left:
                        sp.left = p
                    else:
                        sp.right = p
                sn.right = pr
                pr.parent = sn
            p.left = None
            p.right = sr
            if sr is not None:
                sr.parent = p
            sn.left = pl
            pl.parent = sn
            sn.parent = pp
            if pp is None:
                root = sn
            elif p is pp.left:
                pp.left = sn
            else:
                pp.right = sn
            replacement = sr if sr is not None else p
        elif pl is not None:
            replacement = pl
        elif pr is not None:
            replacement = pr
        else:
            replacement = p
        if replacement is not p:
            pp = replacement.parent = p.parent
            if pp is None:
                root = replacement
                replacement.red = False
            elif p is pp.left:
                pp.left = replacement
            else:
                pp.right = replacement
            p.left = p.right = p.parent = None
        r = root if p.red else _balance_deletion(root, replacement)
        if replacement is p:                                 # detach
            pp = p.parent
            p.parent = None
            if pp is not None:
                if p is pp.left:
                    pp.left = None
                elif p is pp.right:
                    pp.right = None
        if movable:
            self._move_root_to_front(r)

    def _split(self, b: _TreeNode, index: int, bit: int) -> None:
        """``TreeNode.split``: a tree bin into its two halves of the doubled table."""
        tab = self._table
        lo: list[_TreeNode] = []
        hi: list[_TreeNode] = []
        e: _TreeNode | None = b
        while e is not None:
            (hi if e.hash & bit else lo).append(e)
            e = e.next
        for half in (lo, hi):
            prev = None
            for node in half:
                node.prev = prev
                node.next = None
                if prev is not None:
                    prev.next = node
                prev = node
        if lo:
            if len(lo) <= JAVA_HASHMAP_UNTREEIFY:
                tab[index] = [n.key for n in lo]
            else:
                tab[index] = lo[0]
                if hi:
                    self._treeify(lo[0])
        if hi:
            if len(hi) <= JAVA_HASHMAP_UNTREEIFY:
                tab[index + bit] = [n.key for n in hi]
            else:
                tab[index + bit] = hi[0]
                if lo:
                    self._treeify(hi[0])


def java_hash_order(keys: Iterable[Any], *, compute_if_absent: bool = False,
                    **options: Any) -> list[Any]:
    """The order in which a ``java.util.HashMap`` (or ``HashSet``) built with the default
    constructor iterates its keys after ``put`` (or, ``compute_if_absent``, after
    ``computeIfAbsent``) of each of ``keys`` in that order (a repeated key adds nothing, but a
    ``computeIfAbsent`` on it may still grow the table): ``JavaHashMap``, exact
    (table growth, bins, trees). ``options``: ``JavaHashMap``'s ``hash`` and ``compare``, for
    keys other than ``String``. Kafka's assignors iterate such maps; their output order follows
    it.

    >>> java_hash_order(["b", "a", "c"])
    ['a', 'b', 'c']
    >>> ids = ["AaAaAa", "AaAaBB", "AaBBAa", "AaBBBB", "BBAaAa", "BBAaBB", "BBBBAa", "BBBBBB"]
    >>> java_hash_order(ids) == ids            # one bin, in insertion order
    True
    >>> java_hash_order(ids, compute_if_absent=True) == ids[::-1]
    True
    """
    m = JavaHashMap(**options)
    add = m.compute_if_absent if compute_if_absent else m.put
    for k in keys:
        add(k)
    return m.keys()


def java_grown_capacity(size: int) -> int:
    """The table size of a ``java.util.HashMap`` made with the default constructor after
    ``size`` puts (16, doubled whenever the size passes three quarters of it)."""
    capacity = 16
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def java_copy_capacity(size: int, *, jvm: int = 17) -> int:
    """The table size of ``new HashSet<>(collection)`` of ``size`` elements, before any resize:
    ``tableSizeFor(java_copy_threshold(size, hash_set=True))`` (Java 17: the power of two at or
    above ``max(size / .75 + 1, 16)``; Java 19 and later: at or above ``ceil(max(size, 12) /
    .75)``)."""
    return java_table_size_for(java_copy_threshold(size, jvm=jvm, hash_set=True))


def java_table_order(hashes: list[int], capacity: int) -> list[int]:
    """The positions of ``hashes`` (each key's ``hashCode``, in insertion order, keys distinct)
    in the order a ``HashMap`` of table size ``capacity``, filled by ``put``, iterates them,
    *as long as no bin holds more than eight keys* (no tree bins) and the puts do not grow the
    table: for exact orders use ``JavaHashMap`` (or ``java_set_order``)."""
    def bucket(h: int) -> int:
        h &= _MASK32
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(range(len(hashes)), key=lambda i: (bucket(hashes[i]), i))


def java_set_order(keys: Iterable[Any], *, copy: bool = False, jvm: int = 17,
                   **options: Any) -> list[Any]:
    """The order a ``java.util.HashSet`` iterates ``keys`` (distinct, in the order they went
    in): filled by ``add`` after ``new HashSet<>()``, or (``copy``) made by ``new
    HashSet<>(collection)`` of a collection iterating them in that order, sized as ``jvm`` sizes
    it. ``options``: ``JavaHashMap``'s ``hash`` and ``compare``. Exact (``JavaHashMap``).

    >>> twelve = [(0, i) for i in (*range(2, 13), 17)]        # Uuid (most, least) halves
    >>> order = java_set_order(twelve, copy=True, hash=lambda u: java_uuid_hash(*u))
    >>> order == java_set_order(twelve, copy=True, jvm=25, hash=lambda u: java_uuid_hash(*u))
    False
    """
    if copy:
        return JavaHashMap.copy_of(keys, jvm=jvm, **options).keys()
    return java_hash_order(keys, **options)


def java_integer_compare(a: int, b: int) -> int:
    """``Integer.compareTo`` (and ``Long.compareTo``): the sign of ``a - b``."""
    return (a > b) - (a < b)


def java_uuid_compare(a: tuple[int, int], b: tuple[int, int]) -> int:
    """``org.apache.kafka.common.Uuid.compareTo`` of two (most, least) pairs of signed 64-bit
    halves: the most significant halves, then the least, each compared as signed ``long``."""
    return (a > b) - (a < b)


def java_uuid_hash(most: int, least: int) -> int:
    """``org.apache.kafka.common.Uuid.hashCode``: the two halves of ``most ^ least`` xored."""
    h = (most ^ least) & 0xFFFFFFFFFFFFFFFF
    return wrap32((h >> 32) ^ h)


class JavaIndexOutOfBoundsError(IndexError):
    """What Java's ``List.get`` throws for an index outside the list."""


class JavaNullPointerError(TypeError):
    """Where upstream would throw ``NullPointerException`` (a null argument it dereferences)."""


def java_split(s: str, sep: str) -> list[str]:
    """Java's ``String.split(sep)`` for a literal, single-character separator.

    Java keeps leading empty pieces and drops trailing ones; a string made only of separators
    gives no pieces at all, and the empty string gives one empty piece (spec 3.5).

    >>> java_split("room1@broker-a@", "@"), java_split("@", "@"), java_split("", "@")
    (['room1', 'broker-a'], [], [''])
    """
    if s == "":
        return [""]
    parts = s.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


# ``Character.isWhitespace(char)`` (OpenJDK 17, Unicode 13; the set is the same through Java 25):
# the space, line and paragraph separators (Zs, Zl, Zp) but the no-break spaces U+00A0, U+2007
# and U+202F, plus U+0009..U+000D and U+001C..U+001F. Python's ``str.isspace`` differs: it also
# takes U+0085 and the three no-break spaces.
_JAVA_WHITESPACE = frozenset([*range(0x09, 0x0E), *range(0x1C, 0x20), 0x20, 0x1680,
                              *range(0x2000, 0x2007), *range(0x2008, 0x200B), 0x2028, 0x2029,
                              0x205F, 0x3000])


def java_is_whitespace(unit: int) -> bool:
    """``Character.isWhitespace(char)`` of one UTF-16 code unit.

    >>> java_is_whitespace(0x2003), java_is_whitespace(0xA0), java_is_whitespace(0x85)
    (True, False, False)
    """
    return unit in _JAVA_WHITESPACE


def java_is_blank(s: str) -> bool:
    """commons-lang3's ``StringUtils.isBlank``: empty, or every UTF-16 unit whitespace
    (``Character.isWhitespace(cs.charAt(i))``; 3.12.0 and 3.20.0, the Proxy's 5.3.3 and 5.5.0).

    >>> java_is_blank(""), java_is_blank(" \\t\\u3000"), java_is_blank("\\u00a0")
    (True, True, False)
    """
    return all(java_is_whitespace(u) for u in utf16_units(s))


def _d2i(x: float) -> int:
    """Java's ``(int) double``: truncation toward zero, saturating at the ``int`` range (NaN: 0)."""
    if x != x:
        return 0
    if x >= INT_MAX:
        return INT_MAX
    if x <= INT_MIN:
        return INT_MIN
    return int(x)


def guava_consistent_hash(value: int, buckets: int) -> int:
    """Guava's ``Hashing.consistentHash(long input, int buckets)`` (guava 32.0.1-jre, the
    rocketmq-proxy 5.3.3 and 5.5.0 class path; ``com/google/common/hash/Hashing.java``): Lamping
    and Veach's jump consistent hash driven by Guava's ``LinearCongruentialGenerator`` seeded
    with ``value``: ``state = 2862933555777941757 * state + 1`` (64-bit wrap), ``nextDouble() =
    ((int) (state >>> 33) + 1) / 2^31`` (an ``int`` sum, so it wraps); from ``candidate = 0``,
    jump to ``next = (int) ((candidate + 1) / nextDouble())`` while ``0 <= next < buckets``.

    Raises ``ValueError`` for ``buckets <= 0`` (Guava's ``checkArgument``:
    ``IllegalArgumentException``, "buckets must be positive").

    >>> guava_consistent_hash(0, 1), [guava_consistent_hash(java_string_hash("order-1"), n)
    ...                               for n in (2, 8, 16)]
    (0, [0, 3, 3])
    """
    if buckets <= 0:
        raise ValueError(f"buckets must be positive: {buckets}")
    state = wrap64(value)
    candidate = 0
    while True:
        state = (2862933555777941757 * state + 1) & 0xFFFFFFFFFFFFFFFF
        # ``(int) (state >>> 33) + 1`` is int arithmetic: 2^31 - 1 + 1 wraps to -2^31 (-1.0)
        double = wrap32((state >> 33) + 1) / 2147483648.0
        nxt = _d2i((candidate + 1) / double)
        if 0 <= nxt < buckets:
            candidate = nxt
        else:
            return candidate
