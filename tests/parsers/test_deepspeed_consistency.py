# ruff: noqa: E501 -- test data are verbatim log lines
"""DeepSpeed's cross-rank consistency check (parsers/deepspeed_consistency.py) and the rank it
names as running another sequence (rules/collective_mismatch.py)."""

from __future__ import annotations

from tests.builders import analyze_files, only, parsed_by

# hiyouga/LlamaFactory#4428, verbatim (the paste wrapped the long list onto further lines):
# DeepSeek-V2-Lite under ZeRO-3, at the first evaluation
DISAGREEMENT = [
    '    raise RuntimeError(f"disagreement between rank0 and rank{dist.get_rank()}: "                                                                                                                                                        ',
    "RuntimeError: disagreement between rank0 and rank6: rank0: [-4829058278667240489, 4394031851561860485, 4278486279158906243, -4798799995676934783, -4830042618591200501, 4249635521387937133, 4371512801157659990, -4813858337854702457, ",
    "4361801115582020690, -4797393215659590434, 4387136090466270252, 4310574415757851927, -4825117832991851458, -4820756686716912490, 4383193735674575994, -4925041443309208244, -4779239419692597856, 4391498389956115450, 43836175716412769",
    "73, 4381365675205147666, -4886056957143074119, -4820895255217652479, 4396001246555683747,...]",
]


def test_the_rank_that_disagreed_with_rank_0_is_read_from_its_message():
    said = only(parsed_by("deepspeed_consistency", DISAGREEMENT))
    assert (said["event"], said["rank"], said["peer_rank"]) == ("rank_disagreement", 6, 0)
    # the quoted source line of the raise names no rank
    assert said["line"] == 2


def test_a_rank_that_disagreed_with_rank_0_left_the_common_sequence(tmp_path):
    verdict = analyze_files(tmp_path, {"log.txt": DISAGREEMENT}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_mismatch", [6])
    assert verdict.headline == "Rank 6 ran another sequence than rank 0 (DeepSpeed's check)"
    assert "ZeRO-3" in verdict.finding.fix


# hiyouga/LlamaFactory#10224, verbatim (the end of rank 7's traceback): the check of the list's
# length, the two lengths on the lines below the message
LIST_LENGTH = [
    '[rank7]:   File "/opt/conda/envs/ai/lib/python3.12/site-packages/deepspeed/runtime/zero/utils.py", line 82, in assert_lst_len_same_as_other_ranks',
    '[rank7]:     raise RuntimeError(f"Detected a disagreement on list length between rank0 and rank{dist.get_rank()}: "',
    "[rank7]: RuntimeError: Detected a disagreement on list length between rank0 and rank7: ",
    "[rank7]:  rank0: 30815 ",
    "[rank7]:  rank7: 30833",
]


def test_a_disagreement_on_the_list_s_length_names_the_rank_that_raised_it(tmp_path):
    said = only(parsed_by("deepspeed_consistency", LIST_LENGTH))
    assert (said["event"], said["rank"], said["peer_rank"]) == ("rank_disagreement", 7, 0)
    assert said["line"] == 3  # not the quoted source line of the raise
    verdict = analyze_files(tmp_path, {"log.txt": LIST_LENGTH}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_mismatch", [7])
    assert verdict.headline == "Rank 7 ran another sequence than rank 0 (DeepSpeed's check)"
