"""Registry of the datasets: one :class:`Dataset` record each (files, sha256 sums, source,
stand-in shape); the loader of each is registered for its name in ``_loaders``.

The sums are those published next to the course data (``SHA256SUMS`` in each dataset
folder). KuaiRec's per-file sums are not known in advance: their value is ``None`` and
they are checked by *trust on first use* (see :func:`recbias_tutorial._files.verify`);
its archive is checked against the MD5 published on Zenodo.

Nothing in this module touches the disk or the network.
"""

from __future__ import annotations

from dataclasses import dataclass

@dataclass(frozen=True)
class Source:
    """Where a public dataset is downloaded from."""

    url: str
    known_hash: str | None  # pooch format ("sha256:..." / "md5:..."), None = checked per file
    homepage: str


@dataclass(frozen=True)
class Dataset:
    """Everything the package knows about one dataset, in one record.

    Adding a dataset is one record in :data:`RECORDS` plus one loader function in
    ``_loaders`` registered for its name.
    """

    name: str
    title: str  # human-readable, used in messages
    sha256: dict[str, str | None]  # every known file (path in the folder) -> sum; None = TOFU
    required: tuple[str, ...]  # the files its loader reads
    standin: dict  # simulate() arguments of its stand-in (shape and density of the real data)
    source: Source | None = None  # public download; None = obtained by hand (licence)
    subdirs: tuple[str, ...] = ("",)  # sub-folders of <root>/<name>/ that may hold the files


#: The datasets, in the order chapters introduce them.
RECORDS: dict[str, Dataset] = {d.name: d for d in (
    Dataset(
        "coat", "Coat (Schnabel et al., ICML 2016)",
        sha256={
            "train.ascii": "a87bd9e7eaf3b89f976df3f25d4aa5d5d871be8a00b58947df9e6e015559bd37",
            "test.ascii": "de6714ab105a5e0be8166be7fd313901b29f9a09c3bea307901457d1d71847e6",
            "propensities.ascii": "a72e3142a413623c4a6b9d20c4f70fcc017e0db67cc3eb242116f69fb8fb9661",
            "README.txt": "cda6f0f12aa148f5391561ef95a5f2dd6f7e3838ec17e84fcb615bc11a7ffae0",
            "user_item_features/user_features.ascii":
                "d8f9531b601c54a7272602f8b21fa6cb4652cbf122e35d8615ea9645ebbf1b1f",
            "user_item_features/item_features.ascii":
                "edea8217ec5606779b4d3bf819f7591dc63bcd5194d619e8048c2322d07630b1",
            "user_item_features/user_features_map.txt":
                "3b8c825ad4445d4a46a400629c5fb43c805ff5a7982b2e436b69e7262c8a013a",
            "user_item_features/item_features_map.txt":
                "2675dfaa38b89a9cbb1997f0cfcd46ed7e0e366dc515d12d95508d1f356e5d25",
        },
        required=("train.ascii", "test.ascii"),
        standin=dict(n_users=290, n_items=300, mean_ratings_per_user=24.0,
                     n_mar_users=290, n_mar_items=16),
        # The authors' page (Schnabel et al., ICML 2016); sum of the original archive.
        source=Source(
            "https://www.cs.cornell.edu/~schnabts/mnar/coat.zip",
            "sha256:6073d0b515ed1f6e830e4fead66dc76ad7991a7553eaa58e228b234a9d19daed",
            "https://www.cs.cornell.edu/~schnabts/mnar/")),
    Dataset(
        "yahoo_r3", "Yahoo! R3 (Webscope ydata-ymusic-rating-study-v1_0)",
        sha256={
            "ydata-ymusic-rating-study-v1_0-train.txt":
                "85538b3c4a93eafc4f0ce2d39a6cd178e32a6b615ce775b9d635f7995706269d",
            "ydata-ymusic-rating-study-v1_0-test.txt":
                "f27a73bef8c7ccedb17576fe2d4cc52b80c2d5fa60f13529596f003ffd0d8533",
        },
        required=("ydata-ymusic-rating-study-v1_0-train.txt",
                  "ydata-ymusic-rating-study-v1_0-test.txt"),
        # no source: the Webscope licence forbids redistribution (see WEBSCOPE_URL)
        standin=dict(n_users=15400, n_items=1000, mean_ratings_per_user=311704 / 15400,
                     n_mar_users=5400, n_mar_items=10)),
    Dataset(
        "movielens_100k", "MovieLens 100K (GroupLens)",
        sha256={
            "u.data": "06416e597f82b7342361e41163890c81036900f418ad91315590814211dca490",
            "u.item": "553841ebc7de3a0fd0d6b62a204ea30c1e651aacfb2814c7a6584ac52f2c5701",
            "u.user": "f120e114da2e8cf314fd28f99417c94ae9ddf1cb6db8ce0e4b5995d40e90e62c",
            "u.info": "5b0a40b2e47a729ee6203063f6dcf8790c2e63f5a18663e6ee318a72c5f3c27b",
            "u.genre": "9757e0d3e6b298159a80dd48eaf938114690e911e39af97a76949ef1663610bb",
            "u.occupation": "cd5fbec9afe345d993a62fc7817df1a4a9079c4feb267b3118763b8fd942137d",
            "README": "d5f41f88d1a96b8faefed3c2f51fce1fca3be1ba6ab0d06e346898ffae920de9",
        },
        required=("u.data",),
        standin=dict(n_users=943, n_items=1682, mean_ratings_per_user=100000 / 943,
                     n_mar_items=0),
        # GroupLens; the archive is not pinned, every extracted file is checked by sha256.
        source=Source("https://files.grouplens.org/datasets/movielens/ml-100k.zip", None,
                      "https://grouplens.org/datasets/movielens/100k/")),
    Dataset(
        "kuairec", "KuaiRec 2.0 (Gao et al., CIKM 2022)",
        # Unknown in advance: trust on first use (the sum seen first is recorded in the cache).
        sha256={"small_matrix.csv": None, "big_matrix.csv": None},
        required=("small_matrix.csv", "big_matrix.csv"),
        # a 1-5 star world (threshold 4.0, not watch ratios) whose full covers every pair;
        # its ~500 MNAR rows per user are a rough guess
        standin=dict(n_users=1411, n_items=3327, mean_ratings_per_user=500.0, n_mar_items=0),
        # KuaiRec 2.0 on Zenodo, record 18164998 (DOI 10.5281/zenodo.18164998), the location
        # the official README (github.com/chongminggao/KuaiRec) gives; 431,964,858 bytes. The
        # MD5 is the one Zenodo publishes for KuaiRec.zip (quoted identically by several
        # independent projects; we could not check it against the live record from here).
        source=Source("https://zenodo.org/records/18164998/files/KuaiRec.zip",
                      "md5:261550d472c48eff4990fb13c0e5bcf7", "https://kuairec.com/"),
        subdirs=("", "KuaiRec 2.0/data")),
)}

#: Dataset names understood by the loaders, in the order chapters introduce them.
DATASETS: tuple[str, ...] = tuple(RECORDS)

# Views of one field of every record, for the modules that read only that field (the same
# dict objects as in the records: a change through a view changes the record).
#: sha256 of every known file, keyed by dataset and by path relative to the dataset folder.
SHA256: dict[str, dict[str, str | None]] = {n: d.sha256 for n, d in RECORDS.items()}
#: Files each loader reads (a subset of :data:`SHA256`).
REQUIRED: dict[str, tuple[str, ...]] = {n: d.required for n, d in RECORDS.items()}
#: Sub-folders of ``<root>/<name>/`` that may hold the files (``""`` = the folder itself).
SUBDIRS: dict[str, tuple[str, ...]] = {n: d.subdirs for n, d in RECORDS.items()}
#: Public download locations (Yahoo! R3 is deliberately absent: Webscope licence).
SOURCES: dict[str, Source] = {n: d.source for n, d in RECORDS.items() if d.source is not None}
#: Human-readable titles used in messages.
TITLES: dict[str, str] = {n: d.title for n, d in RECORDS.items()}

WEBSCOPE_URL = "https://webscope.sandbox.yahoo.com/catalog.php?datatype=r"
