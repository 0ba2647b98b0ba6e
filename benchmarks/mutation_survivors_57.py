"""Survivors of mutation round 57 (stop 57): the Beam layer's enforcement code, ``transforms/person.py`` (every
mutant), ``transforms/bounded.py``, ``transforms/sharded.py``, ``transforms/validate.py``, ``transforms/common.py`` and
the registry of ``transforms/streaming.py`` (``ResolveEntriesFn``, ``GatedBoundPersonsFn``): a first sample of 60 of
each of those five, and a second of up to 30 more (``benchmarks/mutation_runs/s57/``: the samples, the verdicts, the
confirmations and ``REPORT.md``). Not merged by ``benchmarks/mutation_core_survivors.py`` (that one judges
``transforms/core/``)."""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {
    "transforms.person.x_bound_persons__mutmut_16": (
        "the bounded branch's with_outputs(main='admitted') without the dead-letter tag: Beam's "
        "DoOutputsTuple with no declared tags makes any tag asked for (out['dead_letters'] below) on access, "
        "so the graph has the same outputs (built and compared: the same element types and coders) and the "
        "refused updates still reach the dead letters (the batch tests of tests/test_person_beam.py check "
        "them and pass on it)"
    ),
    "transforms.person.x_bound_persons__mutmut_41": ("the same in the streaming branch: as _16"),
    "transforms.person.x_bound_persons__mutmut_43": (
        "with_output_types(None) on the streaming ParDo: the DoFn's own decorator (with_output_types on "
        "BoundPersonsFn) types the output: the admitted PCollection's element type and coder are the same "
        "(built and compared: Tuple[Tuple[str, str], Any], TupleCoder[TupleCoder[StrUtf8Coder, StrUtf8Coder], "
        "FastPrimitivesCoder])"
    ),
    "transforms.person.xǁBoundPersonsFnǁ_buffer__mutmut_45": (
        "tick <= timer_tick for <: on equality the timer is set again to the same time (closes_at(tick)) and "
        "the cell keeps the same timer tick: the same firings"
    ),
    "transforms.person.xǁ_DecideFnǁfinish_bundle__mutmut_8": (
        "the counts reset to [0, 1, 0] after a bundle: start_bundle sets them to [0, 0, 0] before the next "
        "bundle's first element (Beam calls it before every bundle), so the value is never read"
    ),
    "transforms.person.xǁ_DecideFnǁfinish_bundle__mutmut_9": ("the counts reset to [0, 0, 1]: as _8"),
    "transforms.person.xǁ_DecideFnǁfinish_bundle__mutmut_6": ("the counts reset to None: as _8"),
    "transforms.person.xǁ_DecideFnǁfinish_bundle__mutmut_7": ("the counts reset to [1, 0, 0]: as _8"),
    "transforms.person.x_bound_persons__mutmut_19": (
        "BoundPersonsBoundedFn(None, limit): the bounded DoFn never reads its spec (process and decide read "
        "the limit only; the spec is for the streaming step's timers)"
    ),
    "transforms.person.xǁPersonUpdateCheckǁ__call____mutmut_8": (
        "getattr(rec, 'person') without a default: reached only after UpdateCheck accepted rec, which takes "
        "only UpdateRecord instances (reason: isinstance), and an UpdateRecord always has the field person"
    ),
    "transforms.bounded.xǁResolveEntriesBoundedFnǁ__init____mutmut_2": (
        "self.spec = None: the bounded registry never reads its spec (no timers; its elements are stamped "
        "MIN_TIMESTAMP); nothing else reads the attribute"
    ),
    "transforms.bounded.xǁResolveEntriesBoundedFnǁfinish_bundle__mutmut_3": (
        "accepted reset to None after its counter update: start_bundle sets it to 0 before the next bundle's "
        "first element, so the value is never read"
    ),
    "transforms.bounded.xǁResolveEntriesBoundedFnǁfinish_bundle__mutmut_4": ("accepted reset to 1: as _3"),
    "transforms.sharded.x_shard_of__mutmut_12": (
        "a non-str entry id hashed as repr(None): no such id reaches shard_of (UpdateCheck passes only "
        "non-empty str ids, the person step's keys are person_entry_key strings), and the resolutions do not "
        "depend on the shard function (any deterministic one gives the same per-entry resolutions)"
    ),
    "transforms.validate.xǁUpdateCheckǁ__call____mutmut_15": (
        "raw read when len(rec) > 7 for > 6: reason() passes only UpdateRecord instances, an 8-field "
        "NamedTuple (a subclass cannot have fewer fields): both are always true"
    ),
    "transforms.validate.xǁUpdateCheckǁ__call____mutmut_14": ("raw read when len(rec) >= 6: as _15, always true"),
    "transforms.validate.xǁUpdateCheckǁreason__mutmut_8": (
        "the tick returned with undeclared_stream 1 for 0: its only caller (__call__; ReportCheck has its own "
        "reason) returns (reason, None) and drops the tick whenever a reason is given"
    ),
    "transforms.validate.xǁUpdateCheckǁreason__mutmut_18": (
        "the tick returned with a malformed record 1 for 0: dropped by __call__ with every reason, as _8"
    ),
    "transforms.validate.xǁUpdateCheckǁ_accepted__mutmut_15": (
        "the fast path refuses t == TIME_RANGE[1] (< for <=): it then returns None and reason() decides, "
        "which accepts it with the same output (the docstring's contract; tests/test_speed_update_path.py)"
    ),
    "transforms.validate.xǁUpdateCheckǁ_accepted__mutmut_31": (
        "the fast path refuses tick == end (>= for >): reason() then accepts it with the same output, as _15"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁ_admit__mutmut_35": (
        "tick <= timer_tick for <: on equality the timer is set again to the same time and the same timer "
        "tick is kept: the same firings (as the person step's _buffer__mutmut_45)"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁfinish_bundle__mutmut_41": (
        "done.get(t, None) for done.get(t, 0): every tick of aggs is in done (each accepted update of a tick "
        "was resolved in on_tick_end, which counts -1 at the same tick into resolved), so the default is "
        "never used"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁfinish_bundle__mutmut_43": ("done.get(t) without a default: as _41"),
    "transforms.common.x_emit_results__mutmut_12": (
        "the progress log line names None instead of the event: a log line's text only, as _11"
    ),
    "transforms.common.x_emit_results__mutmut_19": (
        "the progress log line's format upper-cased (%S, %D): logging then fails to format it and reports the "
        "error on stderr without raising (Handler.handleError): a log line only, no release, record, dead "
        "letter or metric changes"
    ),
    "transforms.common.x_in_update_order__mutmut_2": (
        "a list of updates copied too (list(updates)): the same elements; every return is a new list either "
        "way (sorted, or updates[:] below two), and no caller relies on identity"
    ),
    "transforms.common.x_emit_results__mutmut_11": (
        "the progress log line names None instead of the stream: a log line's text only (no release, record, "
        "dead letter or metric changes)"
    ),
}

OPEN: dict[str, str] = {}

# the test that kills each (``confirm``: passes unmutated, fails on the mutant; s57/fast.confirmed.json, and
# s57/fast2.confirmed.json for the second sample's)
KILLED_BY: dict[str, str] = {
    "transforms.person.xǁBoundPersonsFnǁ_buffer__mutmut_31": (
        "tests/test_mutation_kills_beam57.py::test_a_late_update_under_current_is_decided_at_the_persons_next_tick_and_its_window"
    ),
    "transforms.person.xǁBoundPersonsFnǁ_buffer__mutmut_32": (
        "tests/test_mutation_kills_beam57.py::test_a_late_update_under_current_is_decided_at_the_persons_next_tick_and_its_window"
    ),
    "transforms.person.xǁBoundPersonsFnǁ_fire__mutmut_27": (
        "tests/test_mutation_kills_beam57.py::test_the_person_timer_stays_at_the_earliest_pending_tick_after_a_firing"
    ),
    "transforms.person.xǁBoundPersonsFnǁ_buffer__mutmut_3": (
        "tests/test_mutation_kills_beam57.py::test_the_streaming_person_step_counts_each_person_once_and_each_entry_once"
    ),
    "transforms.person.x_person_limit__mutmut_5": (
        "tests/test_mutation_kills_beam57.py::test_the_person_steps_limit_is_the_units_per_window"
    ),
    "transforms.bounded.xǁResolveEntriesBoundedFnǁ__init____mutmut_1": (
        "tests/test_mutation_kills_beam57.py::test_the_bounded_registry_carries_records_by_default"
    ),
    "transforms.validate.xǁValidateFnǁprocess__mutmut_19": (
        "tests/test_mutation_kills_beam57.py::test_validation_dead_letters_carry_their_reason_the_record_and_the_stream"
    ),
    "transforms.validate.xǁUpdateCheckǁreason__mutmut_13": (
        "tests/test_mutation_kills_beam57.py::test_the_update_check_refuses_every_malformed_field_with_its_reason"
    ),
    "transforms.validate.xǁUpdateCheckǁreason__mutmut_47": (
        "tests/test_mutation_kills_beam57.py::test_the_update_check_refuses_every_malformed_field_with_its_reason"
    ),
    "transforms.common.x_update_record__mutmut_30": (
        "tests/test_mutation_kills_beam57.py::test_a_dead_letter_rebuilds_the_record_as_received"
    ),
    "transforms.common.x_update_record__mutmut_32": (
        "tests/test_mutation_kills_beam57.py::test_a_dead_letter_rebuilds_the_record_as_received"
    ),
    "transforms.common.x_apply_in_order__mutmut_8": (
        "tests/test_mutation_kills_beam57.py::test_an_empty_aggregate_never_stops_the_ones_after_it"
    ),
    "transforms.common.x_floats__mutmut_8": ("tests/test_mutation_kills_beam57.py::test_floats_of_every_estimate_type"),
    "transforms.common.x_in_update_order__mutmut_17": (
        "tests/test_mutation_kills_beam57.py::test_in_update_order_takes_the_full_key_or_raises_as_it_does"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁon_tick_end__mutmut_79": (
        "tests/test_mutation_kills_beam57.py::test_the_registry_resolves_held_updates_once_the_earlier_ones_arrive_and_counts_what_it_accepts"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁstart_bundle__mutmut_5": (
        "tests/test_mutation_kills_beam57.py::test_the_registry_resolves_held_updates_once_the_earlier_ones_arrive_and_counts_what_it_accepts"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁfinish_bundle__mutmut_93": (
        "tests/test_mutation_kills_beam57.py::test_the_registry_for_the_stateful_merge_emits_one_aggregate_per_tick_at_its_close"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁfinish_bundle__mutmut_95": (
        "tests/test_mutation_kills_beam57.py::test_the_registry_for_the_stateful_merge_emits_one_aggregate_per_tick_at_its_close"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁfinish_bundle__mutmut_42": (
        "tests/test_mutation_kills_beam57.py::test_the_registry_with_counts_for_the_stateful_merge_sends_what_it_buffered_and_what_it_resolved"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁfinish_bundle__mutmut_10": (
        "tests/test_mutation_kills_beam57.py::test_the_registry_with_counts_for_the_stateful_merge_sends_what_it_buffered_and_what_it_resolved"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁfinish_bundle__mutmut_21": (
        "tests/test_mutation_kills_beam57.py::test_the_registry_with_counts_for_the_stateful_merge_sends_what_it_buffered_and_what_it_resolved"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁfinish_bundle__mutmut_20": (
        "tests/test_mutation_kills_beam57.py::test_the_registry_with_counts_for_the_stateful_merge_sends_what_it_buffered_and_what_it_resolved"
    ),
    "transforms.person.x_person_limit__mutmut_7": (
        "tests/test_mutation_kills_beam57.py::test_the_person_steps_limit_is_the_units_per_window"
    ),
    "transforms.person.x_read_person_cell__mutmut_4": (
        "tests/test_mutation_kills_beam57.py::test_a_person_cell_of_another_shape_is_refused"
    ),
    "transforms.person.xǁBoundPersonsFnǁ_buffer__mutmut_5": (
        "tests/test_mutation_kills_beam57.py::test_the_streaming_person_step_counts_each_person_once_and_each_entry_once"
    ),
    "transforms.person.xǁBoundPersonsFnǁ_buffer__mutmut_6": (
        "tests/test_mutation_kills_beam57.py::test_the_streaming_person_step_counts_each_person_once_and_each_entry_once"
    ),
    "transforms.person.xǁBoundPersonsFnǁ_buffer__mutmut_4": (
        "tests/test_mutation_kills_beam57.py::test_the_streaming_person_step_counts_each_person_once_and_each_entry_once"
    ),
    "transforms.person.xǁBoundPersonsFnǁfinish_bundle__mutmut_14": (
        "tests/test_mutation_kills_beam57.py::test_the_gated_person_steps_counts_are_stamped_with_their_earliest_ticks_close"
    ),
    "transforms.person.xǁBoundPersonsFnǁ_buffer__mutmut_7": (
        "tests/test_mutation_kills_beam57.py::test_the_streaming_person_step_counts_each_person_once_and_each_entry_once"
    ),
    "transforms.person.xǁ_DecideFnǁdecide__mutmut_17": (
        "tests/test_mutation_kills_beam57.py::test_the_streaming_person_step_counts_each_person_once_and_each_entry_once"
    ),
    "transforms.person.xǁ_DecideFnǁdecide__mutmut_13": (
        "tests/test_mutation_kills_beam57.py::test_the_streaming_person_step_counts_each_person_once_and_each_entry_once"
    ),
    "transforms.bounded.xǁResolveEntriesBoundedFnǁstart_bundle__mutmut_3": (
        "tests/test_mutation_kills_beam57.py::test_the_bounded_registry_carries_records_by_default"
    ),
    "transforms.sharded.xǁResolveShardsFnǁ__init____mutmut_1": (
        "tests/test_mutation_kills_beam57.py::test_the_sharded_registry_by_default_emits_per_stream_as_the_entry_registry_does"
    ),
    "transforms.validate.xǁValidateFnǁprocess__mutmut_22": (
        "tests/test_mutation_kills_beam57.py::test_validation_dead_letters_carry_their_reason_the_record_and_the_stream"
    ),
    "transforms.validate.xǁValidateFnǁprocess__mutmut_20": (
        "tests/test_mutation_kills_beam57.py::test_validation_dead_letters_carry_their_reason_the_record_and_the_stream"
    ),
    "transforms.validate.xǁUpdateCheckǁreason__mutmut_52": (
        "tests/test_mutation_kills_beam57.py::test_the_update_check_refuses_every_malformed_field_with_its_reason"
    ),
    "transforms.validate.xǁValidateFnǁprocess__mutmut_27": (
        "tests/test_mutation_kills_beam57.py::test_validation_dead_letters_carry_their_reason_the_record_and_the_stream"
    ),
    "transforms.common.xǁReleaseStepǁwake__mutmut_1": (
        "tests/test_mutation_kills_beam57.py::test_batches_after_finish_counts_only_the_batches_a_finished_mechanism_receives"
    ),
    "transforms.common.xǁReleaseStepǁwake__mutmut_4": (
        "tests/test_mutation_kills_beam57.py::test_batches_after_finish_counts_only_the_batches_a_finished_mechanism_receives"
    ),
    "transforms.common.xǁReleaseStepǁwake__mutmut_5": (
        "tests/test_mutation_kills_beam57.py::test_batches_after_finish_counts_only_the_batches_a_finished_mechanism_receives"
    ),
    "transforms.common.xǁReleaseStepǁwake__mutmut_8": (
        "tests/test_mutation_kills_beam57.py::test_batches_after_finish_counts_only_the_batches_a_finished_mechanism_receives"
    ),
    "transforms.validate.xǁValidateFnǁprocess__mutmut_13": (
        "tests/test_mutation_kills_beam57.py::test_validation_dead_letters_carry_their_reason_the_record_and_the_stream"
    ),
    "transforms.common.x_emit_results__mutmut_23": (
        "tests/test_consistency.py::test_streaming_transform_releases_the_in_memory_consistent_answers"
    ),
    "transforms.common.x_emit_results__mutmut_75": (
        "tests/test_mutation_kills_beam57.py::test_batches_after_finish_counts_only_the_batches_a_finished_mechanism_receives"
    ),
    "transforms.common.x_emit_results__mutmut_55": (
        "tests/test_mutation_kills_beam57.py::test_batches_after_finish_counts_only_the_batches_a_finished_mechanism_receives"
    ),
    "transforms.common.x_update_record__mutmut_15": (
        "tests/test_mutation_kills_beam57.py::test_a_dead_letter_rebuilds_the_record_as_received"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁprocess__mutmut_81": (
        "tests/test_mutation_kills_beam57.py::test_the_registry_resolves_held_updates_once_the_earlier_ones_arrive_and_counts_what_it_accepts"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁfinish_bundle__mutmut_2": (
        "tests/test_mutation_kills_beam57.py::test_the_registry_resolves_held_updates_once_the_earlier_ones_arrive_and_counts_what_it_accepts"
    ),
    "transforms.streaming.xǁResolveEntriesFnǁfinish_bundle__mutmut_11": (
        "tests/test_mutation_kills_beam57.py::test_the_registry_with_counts_for_the_stateful_merge_sends_what_it_buffered_and_what_it_resolved"
    ),
    "transforms.common.x_floats__mutmut_6": ("tests/test_mutation_kills_beam57.py::test_floats_of_every_estimate_type"),
    "transforms.common.xǁReleaseStepǁdiscard__mutmut_1": (
        "tests/test_mutation_kills_beam57.py::test_batches_after_finish_counts_only_the_batches_a_finished_mechanism_receives"
    ),
    "transforms.validate.xǁUpdateCheckǁreason__mutmut_59": (
        "tests/test_mutation_kills_beam57.py::test_the_update_check_refuses_every_malformed_field_with_its_reason"
    ),
    "transforms.validate.xǁValidateFnǁprocess__mutmut_8": (
        "tests/test_mutation_kills_beam57.py::test_validation_dead_letters_carry_their_reason_the_record_and_the_stream"
    ),
    "transforms.common.xǁReleaseStepǁwake__mutmut_3": (
        "tests/test_mutation_kills_beam57.py::test_batches_after_finish_counts_only_the_batches_a_finished_mechanism_receives"
    ),
    "transforms.common.xǁReleaseStepǁwake__mutmut_11": (
        "tests/test_growing.py::test_query_stream_equals_the_core[streaming]"
    ),
}
