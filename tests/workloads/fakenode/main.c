// SPDX-License-Identifier: MIT
/*
 * fakenode: a process that exports V8's post-mortem metadata (the 531
 * v8dbg_* ints and v8::internal::Version's statics, as node does), its
 * values node 20's (V8 11.3.244.8, as gdb prints them from /usr/bin/node)
 * but for the release, FAKE_V8_MAJOR.FAKE_V8_MINOR (default 99.0: one
 * the agent does not read).  Built with -rdynamic: the ints are dynamic
 * symbols, as node's are.
 *   fakenode unknown [SECONDS]  spins in fake_spin() that long (default 3);
 *                               built for V8 99.0, the agent must refuse
 *                               it, say so once, count it, keep native frames
 *   fakenode lying [SECONDS]    spins in a frame shaped as a JavaScript one
 *                               (fake_js_loop: no CFI, rbp-based, a context
 *                               and a function below rbp) whose function's
 *                               shared is an object whose map says
 *                               SharedFunctionInfo, and nothing more is:
 *                               built for V8 11.3 (fakenode-lying), BPF
 *                               takes the frame, the loader must refuse to
 *                               name it and count it
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef FAKE_V8_MAJOR
#define FAKE_V8_MAJOR 99
#define FAKE_V8_MINOR 0
#endif

int version_major __asm__("_ZN2v88internal7Version6major_E") = FAKE_V8_MAJOR;
int version_minor __asm__("_ZN2v88internal7Version6minor_E") = FAKE_V8_MINOR;
int version_build __asm__("_ZN2v88internal7Version6build_E") = 244;
int version_patch __asm__("_ZN2v88internal7Version6patch_E") = 8;
int v8dbg_APIObjectType = 1058;
int v8dbg_CodeKindBaseline = 11;
int v8dbg_CodeKindBytecodeHandler = 0;
int v8dbg_CodeKindFieldMask = 15;
int v8dbg_CodeKindFieldShift = 0;
int v8dbg_CodeKindInterpretedFunction = 10;
int v8dbg_ConsStringTag = 1;
int v8dbg_ContextRegister = 6;
int v8dbg_DeoptimizationDataInlinedFunctionCountIndex = 1;
int v8dbg_DeoptimizationDataInliningPositionsIndex = 7;
int v8dbg_DeoptimizationDataLiteralArrayIndex = 2;
int v8dbg_DeoptimizationDataOptimizationIdIndex = 5;
int v8dbg_DeoptimizationDataSharedFunctionInfoIndex = 6;
int v8dbg_ExternalStringTag = 2;
int v8dbg_FirstContextType = 205;
int v8dbg_FirstNonstringType = 128;
int v8dbg_HeapObjectTag = 1;
int v8dbg_HeapObjectTagMask = 3;
int v8dbg_InterpreterBytecodeArrayRegister = 12;
int v8dbg_InterpreterBytecodeOffsetRegister = 9;
int v8dbg_IsNotStringMask = -128;
int v8dbg_JSFunctionRegister = 7;
int v8dbg_LastContextType = 214;
int v8dbg_OddballArgumentsMarker = 4;
int v8dbg_OddballException = 8;
int v8dbg_OddballFalse = 0;
int v8dbg_OddballNull = 3;
int v8dbg_OddballOther = 7;
int v8dbg_OddballTheHole = 2;
int v8dbg_OddballTrue = 1;
int v8dbg_OddballUndefined = 5;
int v8dbg_OddballUninitialized = 6;
int v8dbg_OneByteStringTag = 8;
int v8dbg_ReturnRegister0 = 0;
int v8dbg_RuntimeCallFunctionRegister = 3;
int v8dbg_SeqStringTag = 0;
int v8dbg_SlicedStringTag = 3;
int v8dbg_SmiShiftSize = 31;
int v8dbg_SmiTag = 0;
int v8dbg_SmiTagMask = 1;
int v8dbg_SmiValueShift = 1;
int v8dbg_SpecialAPIObjectType = 1040;
int v8dbg_StringEncodingMask = 8;
int v8dbg_StringRepresentationMask = 7;
int v8dbg_StringTag = 0;
int v8dbg_SystemPointerSize = 8;
int v8dbg_SystemPointerSizeLog2 = 3;
int v8dbg_TaggedSize = 8;
int v8dbg_TaggedSizeLog2 = 3;
int v8dbg_ThinStringTag = 5;
int v8dbg_TwoByteStringTag = 0;
int v8dbg_bit_field2_elements_kind_mask = 252;
int v8dbg_bit_field2_elements_kind_shift = 2;
int v8dbg_bit_field3_is_dictionary_map_shift = 21;
int v8dbg_bit_field3_number_of_own_descriptors_mask = 1047552;
int v8dbg_bit_field3_number_of_own_descriptors_shift = 10;
int v8dbg_class_AccessorPair__getter__Object = 8;
int v8dbg_class_AccessorPair__setter__Object = 16;
int v8dbg_class_AllocationMemento__allocation_site__Object = 8;
int v8dbg_class_AllocationSite__dependent_code__DependentCode = 24;
int v8dbg_class_AllocationSite__nested_site__Object = 16;
int v8dbg_class_AllocationSite__transition_info_or_boilerplate__Object = 8;
int v8dbg_class_AllocationSite__weak_next__Object = 40;
int v8dbg_class_BytecodeArray__data__uintptr_t = 54;
int v8dbg_class_Code__bytecode_offset_table__ByteArray = 24;
int v8dbg_class_Code__bytecode_or_interpreter_data__HeapObject = 16;
int v8dbg_class_Code__deoptimization_data__FixedArray = 16;
int v8dbg_class_Code__relocation_info__ByteArray = 8;
int v8dbg_class_Code__source_position_table__ByteArray = 24;
int v8dbg_class_ConsString__first__String = 16;
int v8dbg_class_ConsString__second__String = 24;
int v8dbg_class_DataHandler__data1__weak = 24;
int v8dbg_class_DataHandler__data2__weak = 32;
int v8dbg_class_DataHandler__data3__weak = 40;
int v8dbg_class_DescriptorArray__header_size__uintptr_t = 24;
int v8dbg_class_ExternalString__resource__Object = 16;
int v8dbg_class_FeedbackCell__value__HeapObject = 8;
int v8dbg_class_FixedArrayBase__length__SMI = 8;
int v8dbg_class_FixedArray__data__uintptr_t = 16;
int v8dbg_class_HeapNumber__value__double = 8;
int v8dbg_class_HeapObject__map__Map = 0;
int v8dbg_class_InstructionStream__instruction_start__uintptr_t = 16;
int v8dbg_class_JSArrayBufferView__byte_length__size_t = 40;
int v8dbg_class_JSArrayBufferView__byte_offset__size_t = 32;
int v8dbg_class_JSArrayBuffer__backing_store__uintptr_t = 48;
int v8dbg_class_JSArrayBuffer__byte_length__size_t = 32;
int v8dbg_class_JSArrayBuffer__detach_key__Object = 24;
int v8dbg_class_JSArrayIterator__raw_kind__SMI = 40;
int v8dbg_class_JSDate__value__Object = 24;
int v8dbg_class_JSFunction__context__Context = 32;
int v8dbg_class_JSFunction__prototype_or_initial_map__HeapObject = 56;
int v8dbg_class_JSFunction__raw_feedback_cell__FeedbackCell = 40;
int v8dbg_class_JSFunction__shared__SharedFunctionInfo = 24;
int v8dbg_class_JSGlobalObject__global_dictionary__GlobalDictionary = 8;
int v8dbg_class_JSIteratorResult__done__Object = 32;
int v8dbg_class_JSIteratorResult__value__Object = 24;
int v8dbg_class_JSMessageObject__bytecode_offset__Smi = 64;
int v8dbg_class_JSMessageObject__end_position__SMI = 80;
int v8dbg_class_JSMessageObject__error_level__SMI = 88;
int v8dbg_class_JSMessageObject__raw_type__SMI = 24;
int v8dbg_class_JSMessageObject__shared_info__HeapObject = 56;
int v8dbg_class_JSMessageObject__start_position__SMI = 72;
int v8dbg_class_JSObject__elements__Object = 16;
int v8dbg_class_JSObject__internal_fields__uintptr_t = 24;
int v8dbg_class_JSReceiver__raw_properties_or_hash__Object = 8;
int v8dbg_class_JSRegExp__last_index__Object = 48;
int v8dbg_class_JSRegExp__source__Object = 32;
int v8dbg_class_JSTypedArray__base_pointer__Object = 72;
int v8dbg_class_JSTypedArray__external_pointer__uintptr_t = 64;
int v8dbg_class_JSTypedArray__length__Object = 56;
int v8dbg_class_Map__bit_field2__char = 15;
int v8dbg_class_Map__bit_field3__int = 16;
int v8dbg_class_Map__bit_field__char = 14;
int v8dbg_class_Map__constructor_or_back_pointer__Object = 32;
int v8dbg_class_Map__dependent_code__DependentCode = 48;
int v8dbg_class_Map__inobject_properties_start_or_constructor_function_index__char = 9;
int v8dbg_class_Map__instance_descriptors__DescriptorArray = 40;
int v8dbg_class_Map__instance_descriptors_offset = 40;
int v8dbg_class_Map__instance_size_in_words__char = 8;
int v8dbg_class_Map__instance_type__uint16_t = 12;
int v8dbg_class_Map__native_context__NativeContext = 32;
int v8dbg_class_Map__native_context_or_null__Object = 32;
int v8dbg_class_Map__prototype__HeapObject = 24;
int v8dbg_class_Map__prototype__Object = 24;
int v8dbg_class_Map__prototype_info__Object = 64;
int v8dbg_class_Map__raw_transitions__weak = 64;
int v8dbg_class_Map__wasm_type_info__WasmTypeInfo = 32;
int v8dbg_class_Oddball__kind_offset__int = 40;
int v8dbg_class_Oddball__to_number__Object = 24;
int v8dbg_class_Oddball__to_string__String = 16;
int v8dbg_class_Oddball__type_of__String = 32;
int v8dbg_class_Script__compiled_lazy_function_positions__Object = 96;
int v8dbg_class_Script__eval_from_position__SMI = 80;
int v8dbg_class_Script__eval_from_shared_or_wrapped_arguments__Object = 72;
int v8dbg_class_Script__line_ends__Object = 56;
int v8dbg_class_Script__name__Object = 16;
int v8dbg_class_Script__source__Object = 8;
int v8dbg_class_Script__type__SMI = 48;
int v8dbg_class_Script__wasm_breakpoint_infos__FixedArray = 72;
int v8dbg_class_Script__wasm_managed_native_module__Object = 80;
int v8dbg_class_Script__wasm_weak_instance_list__WeakArrayList = 88;
int v8dbg_class_SeqOneByteString__chars__char = 16;
int v8dbg_class_SeqTwoByteString__chars__char = 16;
int v8dbg_class_SharedFunctionInfo__feedback_metadata__FeedbackMetadata = 24;
int v8dbg_class_SharedFunctionInfo__flags__int = 48;
int v8dbg_class_SharedFunctionInfo__function_data__Object = 8;
int v8dbg_class_SharedFunctionInfo__internal_formal_parameter_count__uint16_t = 42;
int v8dbg_class_SharedFunctionInfo__length__uint16_t = 40;
int v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object = 16;
int v8dbg_class_SharedFunctionInfo__raw_function_token_offset__int16_t = 44;
int v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject = 32;
int v8dbg_class_SlicedString__offset__SMI = 24;
int v8dbg_class_SlicedString__parent__String = 16;
int v8dbg_class_String__length__int32_t = 12;
int v8dbg_class_Symbol__name__Object = 16;
int v8dbg_class_ThinString__actual__String = 16;
int v8dbg_class_UncompiledData__end_position__int32_t = 20;
int v8dbg_class_UncompiledData__inferred_name__String = 8;
int v8dbg_class_UncompiledData__start_position__int32_t = 16;
int v8dbg_context_idx_prev = 1;
int v8dbg_context_idx_scope_info = 0;
int v8dbg_context_min_slots = 2;
int v8dbg_elements_dictionary_elements = 13;
int v8dbg_elements_fast_elements = 2;
int v8dbg_elements_fast_holey_elements = 3;
int v8dbg_frametype_BaselineFrame = 14;
int v8dbg_frametype_BuiltinContinuationFrame = 19;
int v8dbg_frametype_BuiltinExitFrame = 25;
int v8dbg_frametype_BuiltinFrame = 24;
int v8dbg_frametype_CWasmEntryFrame = 10;
int v8dbg_frametype_ConstructEntryFrame = 2;
int v8dbg_frametype_ConstructFrame = 23;
int v8dbg_frametype_EntryFrame = 1;
int v8dbg_frametype_ExitFrame = 3;
int v8dbg_frametype_InternalFrame = 22;
int v8dbg_frametype_InterpretedFrame = 13;
int v8dbg_frametype_IrregexpFrame = 27;
int v8dbg_frametype_JavaScriptBuiltinContinuationFrame = 20;
int v8dbg_frametype_JavaScriptBuiltinContinuationWithCatchFrame = 21;
int v8dbg_frametype_JsToWasmFrame = 7;
int v8dbg_frametype_MaglevFrame = 15;
int v8dbg_frametype_NativeFrame = 26;
int v8dbg_frametype_StackSwitchFrame = 8;
int v8dbg_frametype_StubFrame = 17;
int v8dbg_frametype_TurbofanFrame = 16;
int v8dbg_frametype_TurbofanStubWithContextFrame = 18;
int v8dbg_frametype_WasmDebugBreakFrame = 9;
int v8dbg_frametype_WasmExitFrame = 11;
int v8dbg_frametype_WasmFrame = 4;
int v8dbg_frametype_WasmLiftoffSetupFrame = 12;
int v8dbg_frametype_WasmToJsFrame = 5;
int v8dbg_frametype_WasmToJsFunctionFrame = 6;
int v8dbg_globaldictionaryshape_entry_size = 1;
int v8dbg_jsarray_buffer_was_detached_mask = 4;
int v8dbg_jsarray_buffer_was_detached_shift = 2;
int v8dbg_namedictionary_prefix_start_index = 3;
int v8dbg_namedictionaryshape_entry_size = 3;
int v8dbg_namedictionaryshape_prefix_size = 3;
int v8dbg_native_context_embedder_data_offset = 48;
int v8dbg_numberdictionaryshape_entry_size = 3;
int v8dbg_numberdictionaryshape_prefix_size = 1;
int v8dbg_off_fp_args = 16;
int v8dbg_off_fp_bytecode_array = -32;
int v8dbg_off_fp_bytecode_offset = -40;
int v8dbg_off_fp_constant_pool = 0;
int v8dbg_off_fp_context = -8;
int v8dbg_off_fp_context_or_frame_type = -8;
int v8dbg_off_fp_function = -16;
int v8dbg_parent_AbstractCode__HeapObject = 0;
int v8dbg_parent_AccessorPair__Struct = 0;
int v8dbg_parent_AllocationMemento__Struct = 0;
int v8dbg_parent_AllocationSite__Struct = 0;
int v8dbg_parent_ArrayList__FixedArray = 0;
int v8dbg_parent_ByteArray__FixedArrayBase = 0;
int v8dbg_parent_BytecodeArray__FixedArrayBase = 0;
int v8dbg_parent_Cell__HeapObject = 0;
int v8dbg_parent_ClassPositions__Struct = 0;
int v8dbg_parent_Code__HeapObject = 0;
int v8dbg_parent_ConsString__String = 0;
int v8dbg_parent_DataHandler__Struct = 0;
int v8dbg_parent_DeoptimizationData__FixedArray = 0;
int v8dbg_parent_DeoptimizationLiteralArray__WeakFixedArray = 0;
int v8dbg_parent_DependentCode__WeakArrayList = 0;
int v8dbg_parent_DescriptorArray__HeapObject = 0;
int v8dbg_parent_EnumCache__Struct = 0;
int v8dbg_parent_ExternalOneByteString__ExternalString = 0;
int v8dbg_parent_ExternalString__String = 0;
int v8dbg_parent_ExternalTwoByteString__ExternalString = 0;
int v8dbg_parent_FeedbackCell__Struct = 0;
int v8dbg_parent_FixedArrayBase__HeapObject = 0;
int v8dbg_parent_FixedArrayExactfinal__FixedArray = 0;
int v8dbg_parent_FixedArray__FixedArrayBase = 0;
int v8dbg_parent_FixedDoubleArray__FixedArrayBase = 0;
int v8dbg_parent_FixedIntegerArray__ByteArray = 0;
int v8dbg_parent_GcSafeCode__HeapObject = 0;
int v8dbg_parent_HeapNumber__PrimitiveHeapObject = 0;
int v8dbg_parent_HeapObject__Object = 0;
int v8dbg_parent_InstructionStream__HeapObject = 0;
int v8dbg_parent_InternalizedString__String = 0;
int v8dbg_parent_InterpreterData__Struct = 0;
int v8dbg_parent_JSAccessorPropertyDescriptor__JSObject = 0;
int v8dbg_parent_JSArrayBufferView__JSObjectWithEmbedderSlots = 0;
int v8dbg_parent_JSArrayBuffer__JSObjectWithEmbedderSlots = 0;
int v8dbg_parent_JSArrayIterator__JSObject = 0;
int v8dbg_parent_JSArray__JSObject = 0;
int v8dbg_parent_JSAsyncFromSyncIterator__JSObject = 0;
int v8dbg_parent_JSBoundFunction__JSFunctionOrBoundFunctionOrWrappedFunction = 0;
int v8dbg_parent_JSCustomElementsObject__JSObject = 0;
int v8dbg_parent_JSDataPropertyDescriptor__JSObject = 0;
int v8dbg_parent_JSDataViewOrRabGsabDataView__JSArrayBufferView = 0;
int v8dbg_parent_JSDataView__JSDataViewOrRabGsabDataView = 0;
int v8dbg_parent_JSDate__JSObject = 0;
int v8dbg_parent_JSExternalObject__JSObject = 0;
int v8dbg_parent_JSFunctionOrBoundFunctionOrWrappedFunction__JSObject = 0;
int v8dbg_parent_JSFunction__JSFunctionOrBoundFunctionOrWrappedFunction = 0;
int v8dbg_parent_JSGlobalObject__JSSpecialObject = 0;
int v8dbg_parent_JSGlobalProxy__JSSpecialObject = 0;
int v8dbg_parent_JSIteratorResult__JSObject = 0;
int v8dbg_parent_JSMessageObject__JSObject = 0;
int v8dbg_parent_JSObjectWithEmbedderSlots__JSObject = 0;
int v8dbg_parent_JSObject__JSReceiver = 0;
int v8dbg_parent_JSPrimitiveWrapper__JSCustomElementsObject = 0;
int v8dbg_parent_JSPromise__JSObjectWithEmbedderSlots = 0;
int v8dbg_parent_JSRabGsabDataView__JSDataViewOrRabGsabDataView = 0;
int v8dbg_parent_JSReceiver__HeapObject = 0;
int v8dbg_parent_JSRegExpResultIndices__JSArray = 0;
int v8dbg_parent_JSRegExpResultWithIndices__JSRegExpResult = 0;
int v8dbg_parent_JSRegExpResult__JSArray = 0;
int v8dbg_parent_JSRegExpStringIterator__JSObject = 0;
int v8dbg_parent_JSRegExp__JSObject = 0;
int v8dbg_parent_JSSpecialObject__JSCustomElementsObject = 0;
int v8dbg_parent_JSStringIterator__JSObject = 0;
int v8dbg_parent_JSTypedArray__JSArrayBufferView = 0;
int v8dbg_parent_JSValidIteratorWrapper__JSObject = 0;
int v8dbg_parent_JSWrappedFunction__JSFunctionOrBoundFunctionOrWrappedFunction = 0;
int v8dbg_parent_Map__HeapObject = 0;
int v8dbg_parent_Name__PrimitiveHeapObject = 0;
int v8dbg_parent_NormalizedMapCache__WeakFixedArray = 0;
int v8dbg_parent_Object__TaggedImpl = 0;
int v8dbg_parent_Oddball__PrimitiveHeapObject = 0;
int v8dbg_parent_PodArray__ByteArray = 0;
int v8dbg_parent_PreparseData__HeapObject = 0;
int v8dbg_parent_PrimitiveHeapObject__HeapObject = 0;
int v8dbg_parent_ScopeInfo__HeapObject = 0;
int v8dbg_parent_Script__Struct = 0;
int v8dbg_parent_SeqOneByteString__SeqString = 0;
int v8dbg_parent_SeqString__String = 0;
int v8dbg_parent_SeqTwoByteString__SeqString = 0;
int v8dbg_parent_SharedFunctionInfo__HeapObject = 0;
int v8dbg_parent_SlicedString__String = 0;
int v8dbg_parent_String__Name = 0;
int v8dbg_parent_Struct__HeapObject = 0;
int v8dbg_parent_Symbol__Name = 0;
int v8dbg_parent_TemplateList__FixedArray = 0;
int v8dbg_parent_TemplateLiteralObject__JSArray = 0;
int v8dbg_parent_ThinString__String = 0;
int v8dbg_parent_Tuple2__Struct = 0;
int v8dbg_parent_UncompiledDataWithPreparseDataAndJob__UncompiledDataWithPreparseData = 0;
int v8dbg_parent_UncompiledDataWithPreparseData__UncompiledData = 0;
int v8dbg_parent_UncompiledDataWithoutPreparseDataWithJob__UncompiledDataWithoutPreparseData = 0;
int v8dbg_parent_UncompiledDataWithoutPreparseData__UncompiledData = 0;
int v8dbg_parent_UncompiledData__HeapObject = 0;
int v8dbg_parent_WeakArrayList__HeapObject = 0;
int v8dbg_parent_WeakFixedArray__HeapObject = 0;
int v8dbg_prop_attributes_DONT_DELETE = 4;
int v8dbg_prop_attributes_DONT_ENUM = 2;
int v8dbg_prop_attributes_NONE = 0;
int v8dbg_prop_attributes_READ_ONLY = 1;
int v8dbg_prop_attributes_mask = 28;
int v8dbg_prop_attributes_shift = 2;
int v8dbg_prop_desc_details = 1;
int v8dbg_prop_desc_key = 0;
int v8dbg_prop_desc_size = 3;
int v8dbg_prop_desc_value = 2;
int v8dbg_prop_index_mask = 536346624;
int v8dbg_prop_index_shift = 19;
int v8dbg_prop_kind_Accessor = 1;
int v8dbg_prop_kind_Data = 0;
int v8dbg_prop_kind_mask = 1;
int v8dbg_prop_location_Descriptor = 1;
int v8dbg_prop_location_Field = 0;
int v8dbg_prop_location_mask = 32;
int v8dbg_prop_location_shift = 5;
int v8dbg_prop_representation_double = 2;
int v8dbg_prop_representation_heapobject = 3;
int v8dbg_prop_representation_mask = 448;
int v8dbg_prop_representation_shift = 6;
int v8dbg_prop_representation_smi = 1;
int v8dbg_prop_representation_tagged = 4;
int v8dbg_scopeinfo_idx_first_vars = 3;
int v8dbg_scopeinfo_idx_ncontextlocals = 2;
int v8dbg_scopeinfo_idx_nparams = 1;
int v8dbg_simplenumberdictionaryshape_entry_size = 2;
int v8dbg_simplenumberdictionaryshape_prefix_size = 0;
int v8dbg_type_AbstractInternalClassSubclass1__ABSTRACT_INTERNAL_CLASS_SUBCLASS1_TYPE = 234;
int v8dbg_type_AbstractInternalClassSubclass2__ABSTRACT_INTERNAL_CLASS_SUBCLASS2_TYPE = 235;
int v8dbg_type_AccessCheckInfo__ACCESS_CHECK_INFO_TYPE = 141;
int v8dbg_type_AccessorInfo__ACCESSOR_INFO_TYPE = 242;
int v8dbg_type_AccessorPair__ACCESSOR_PAIR_TYPE = 142;
int v8dbg_type_AliasedArgumentsEntry__ALIASED_ARGUMENTS_ENTRY_TYPE = 143;
int v8dbg_type_AllocationMemento__ALLOCATION_MEMENTO_TYPE = 144;
int v8dbg_type_AllocationSite__ALLOCATION_SITE_TYPE = 145;
int v8dbg_type_ArrayBoilerplateDescription__ARRAY_BOILERPLATE_DESCRIPTION_TYPE = 146;
int v8dbg_type_AsmWasmData__ASM_WASM_DATA_TYPE = 147;
int v8dbg_type_AsyncGeneratorRequest__ASYNC_GENERATOR_REQUEST_TYPE = 148;
int v8dbg_type_BreakPointInfo__BREAK_POINT_INFO_TYPE = 150;
int v8dbg_type_BreakPoint__BREAK_POINT_TYPE = 149;
int v8dbg_type_ByteArray__BYTE_ARRAY_TYPE = 190;
int v8dbg_type_BytecodeArray__BYTECODE_ARRAY_TYPE = 191;
int v8dbg_type_CallHandlerInfo__CALL_HANDLER_INFO_TYPE = 243;
int v8dbg_type_CallSiteInfo__CALL_SITE_INFO_TYPE = 151;
int v8dbg_type_CallableTask__CALLABLE_TASK_TYPE = 134;
int v8dbg_type_CallbackTask__CALLBACK_TASK_TYPE = 135;
int v8dbg_type_Cell__CELL_TYPE = 244;
int v8dbg_type_ClassPositions__CLASS_POSITIONS_TYPE = 152;
int v8dbg_type_Code__CODE_TYPE = 245;
int v8dbg_type_ConsString__CONS_ONE_BYTE_STRING_TYPE = 41;
int v8dbg_type_ConsString__CONS_STRING_TYPE = 33;
int v8dbg_type_CoverageInfo__COVERAGE_INFO_TYPE = 246;
int v8dbg_type_DebugInfo__DEBUG_INFO_TYPE = 153;
int v8dbg_type_DescriptorArray__DESCRIPTOR_ARRAY_TYPE = 236;
int v8dbg_type_EmbedderDataArray__EMBEDDER_DATA_ARRAY_TYPE = 247;
int v8dbg_type_EnumCache__ENUM_CACHE_TYPE = 154;
int v8dbg_type_ErrorStackData__ERROR_STACK_DATA_TYPE = 155;
int v8dbg_type_ExportedSubClass2__EXPORTED_SUB_CLASS2_TYPE = 230;
int v8dbg_type_ExportedSubClass__EXPORTED_SUB_CLASS_TYPE = 229;
int v8dbg_type_ExternalOneByteString__EXTERNAL_ONE_BYTE_STRING_TYPE = 42;
int v8dbg_type_ExternalTwoByteString__EXTERNAL_STRING_TYPE = 34;
int v8dbg_type_FeedbackCell__FEEDBACK_CELL_TYPE = 156;
int v8dbg_type_FeedbackVector__FEEDBACK_VECTOR_TYPE = 249;
int v8dbg_type_FixedArray__FIXED_ARRAY_TYPE = 175;
int v8dbg_type_FixedDoubleArray__FIXED_DOUBLE_ARRAY_TYPE = 192;
int v8dbg_type_Foreign__FOREIGN_TYPE = 204;
int v8dbg_type_FreeSpace__FREE_SPACE_TYPE = 251;
int v8dbg_type_FunctionTemplateInfo__FUNCTION_TEMPLATE_INFO_TYPE = 139;
int v8dbg_type_FunctionTemplateRareData__FUNCTION_TEMPLATE_RARE_DATA_TYPE = 157;
int v8dbg_type_HeapNumber__HEAP_NUMBER_TYPE = 130;
int v8dbg_type_InstructionStream__INSTRUCTION_STREAM_TYPE = 252;
int v8dbg_type_InterceptorInfo__INTERCEPTOR_INFO_TYPE = 158;
int v8dbg_type_InternalClassWithSmiElements__INTERNAL_CLASS_WITH_SMI_ELEMENTS_TYPE = 193;
int v8dbg_type_InternalClassWithStructElements__INTERNAL_CLASS_WITH_STRUCT_ELEMENTS_TYPE = 254;
int v8dbg_type_InternalClass__INTERNAL_CLASS_TYPE = 253;
int v8dbg_type_InternalizedString__ONE_BYTE_INTERNALIZED_STRING_TYPE = 8;
int v8dbg_type_InterpreterData__INTERPRETER_DATA_TYPE = 159;
int v8dbg_type_JSArgumentsObject__JS_ARGUMENTS_OBJECT_TYPE = 2112;
int v8dbg_type_JSArrayBuffer__JS_ARRAY_BUFFER_TYPE = 2062;
int v8dbg_type_JSArrayIterator__JS_ARRAY_ITERATOR_TYPE = 2114;
int v8dbg_type_JSArray__JS_ARRAY_TYPE = 2113;
int v8dbg_type_JSAsyncFromSyncIterator__JS_ASYNC_FROM_SYNC_ITERATOR_TYPE = 2115;
int v8dbg_type_JSAsyncFunctionObject__JS_ASYNC_FUNCTION_OBJECT_TYPE = 2106;
int v8dbg_type_JSAsyncGeneratorObject__JS_ASYNC_GENERATOR_OBJECT_TYPE = 2107;
int v8dbg_type_JSAtomicsCondition__JS_ATOMICS_CONDITION_TYPE = 2097;
int v8dbg_type_JSAtomicsMutex__JS_ATOMICS_MUTEX_TYPE = 2098;
int v8dbg_type_JSBoundFunction__JS_BOUND_FUNCTION_TYPE = 2064;
int v8dbg_type_JSCollator__JS_COLLATOR_TYPE = 2116;
int v8dbg_type_JSDataView__JS_DATA_VIEW_TYPE = 2059;
int v8dbg_type_JSDateTimeFormat__JS_DATE_TIME_FORMAT_TYPE = 2119;
int v8dbg_type_JSDate__JS_DATE_TYPE = 2118;
int v8dbg_type_JSDisplayNames__JS_DISPLAY_NAMES_TYPE = 2120;
int v8dbg_type_JSDurationFormat__JS_DURATION_FORMAT_TYPE = 2121;
int v8dbg_type_JSError__JS_ERROR_TYPE = 2122;
int v8dbg_type_JSExternalObject__JS_EXTERNAL_OBJECT_TYPE = 2123;
int v8dbg_type_JSFinalizationRegistry__JS_FINALIZATION_REGISTRY_TYPE = 2124;
int v8dbg_type_JSFunction__JS_FUNCTION_TYPE = 2066;
int v8dbg_type_JSGlobalObject__JS_GLOBAL_OBJECT_TYPE = 279;
int v8dbg_type_JSGlobalProxy__JS_GLOBAL_PROXY_TYPE = 280;
int v8dbg_type_JSIteratorDropHelper__JS_ITERATOR_DROP_HELPER_TYPE = 2101;
int v8dbg_type_JSIteratorFilterHelper__JS_ITERATOR_FILTER_HELPER_TYPE = 2102;
int v8dbg_type_JSIteratorMapHelper__JS_ITERATOR_MAP_HELPER_TYPE = 2103;
int v8dbg_type_JSIteratorTakeHelper__JS_ITERATOR_TAKE_HELPER_TYPE = 2104;
int v8dbg_type_JSListFormat__JS_LIST_FORMAT_TYPE = 2125;
int v8dbg_type_JSLocale__JS_LOCALE_TYPE = 2126;
int v8dbg_type_JSMap__JS_MAP_TYPE = 2108;
int v8dbg_type_JSMessageObject__JS_MESSAGE_OBJECT_TYPE = 2127;
int v8dbg_type_JSModuleNamespace__JS_MODULE_NAMESPACE_TYPE = 281;
int v8dbg_type_JSNumberFormat__JS_NUMBER_FORMAT_TYPE = 2128;
int v8dbg_type_JSObject__JS_OBJECT_TYPE = 1057;
int v8dbg_type_JSPluralRules__JS_PLURAL_RULES_TYPE = 2129;
int v8dbg_type_JSPrimitiveWrapper__JS_PRIMITIVE_WRAPPER_TYPE = 1041;
int v8dbg_type_JSPromise__JS_PROMISE_TYPE = 2063;
int v8dbg_type_JSProxy__JS_PROXY_TYPE = 278;
int v8dbg_type_JSRabGsabDataView__JS_RAB_GSAB_DATA_VIEW_TYPE = 2060;
int v8dbg_type_JSRawJson__JS_RAW_JSON_TYPE = 2130;
int v8dbg_type_JSRegExpStringIterator__JS_REG_EXP_STRING_ITERATOR_TYPE = 2132;
int v8dbg_type_JSRegExp__JS_REG_EXP_TYPE = 2131;
int v8dbg_type_JSRelativeTimeFormat__JS_RELATIVE_TIME_FORMAT_TYPE = 2133;
int v8dbg_type_JSSegmentIterator__JS_SEGMENT_ITERATOR_TYPE = 2134;
int v8dbg_type_JSSegmenter__JS_SEGMENTER_TYPE = 2135;
int v8dbg_type_JSSegments__JS_SEGMENTS_TYPE = 2136;
int v8dbg_type_JSSet__JS_SET_TYPE = 2109;
int v8dbg_type_JSShadowRealm__JS_SHADOW_REALM_TYPE = 2137;
int v8dbg_type_JSSharedArray__JS_SHARED_ARRAY_TYPE = 2099;
int v8dbg_type_JSSharedStruct__JS_SHARED_STRUCT_TYPE = 2100;
int v8dbg_type_JSStringIterator__JS_STRING_ITERATOR_TYPE = 2138;
int v8dbg_type_JSTemporalCalendar__JS_TEMPORAL_CALENDAR_TYPE = 2139;
int v8dbg_type_JSTemporalDuration__JS_TEMPORAL_DURATION_TYPE = 2140;
int v8dbg_type_JSTemporalInstant__JS_TEMPORAL_INSTANT_TYPE = 2141;
int v8dbg_type_JSTemporalPlainDateTime__JS_TEMPORAL_PLAIN_DATE_TIME_TYPE = 2143;
int v8dbg_type_JSTemporalPlainDate__JS_TEMPORAL_PLAIN_DATE_TYPE = 2142;
int v8dbg_type_JSTemporalPlainMonthDay__JS_TEMPORAL_PLAIN_MONTH_DAY_TYPE = 2144;
int v8dbg_type_JSTemporalPlainTime__JS_TEMPORAL_PLAIN_TIME_TYPE = 2145;
int v8dbg_type_JSTemporalPlainYearMonth__JS_TEMPORAL_PLAIN_YEAR_MONTH_TYPE = 2146;
int v8dbg_type_JSTemporalTimeZone__JS_TEMPORAL_TIME_ZONE_TYPE = 2147;
int v8dbg_type_JSTemporalZonedDateTime__JS_TEMPORAL_ZONED_DATE_TIME_TYPE = 2148;
int v8dbg_type_JSTypedArray__JS_TYPED_ARRAY_TYPE = 2061;
int v8dbg_type_JSV8BreakIterator__JS_V8_BREAK_ITERATOR_TYPE = 2149;
int v8dbg_type_JSValidIteratorWrapper__JS_VALID_ITERATOR_WRAPPER_TYPE = 2150;
int v8dbg_type_JSWeakMap__JS_WEAK_MAP_TYPE = 2110;
int v8dbg_type_JSWeakRef__JS_WEAK_REF_TYPE = 2151;
int v8dbg_type_JSWeakSet__JS_WEAK_SET_TYPE = 2111;
int v8dbg_type_JSWrappedFunction__JS_WRAPPED_FUNCTION_TYPE = 2065;
int v8dbg_type_Map__MAP_TYPE = 255;
int v8dbg_type_MegaDomHandler__MEGA_DOM_HANDLER_TYPE = 256;
int v8dbg_type_ModuleRequest__MODULE_REQUEST_TYPE = 160;
int v8dbg_type_ObjectTemplateInfo__OBJECT_TEMPLATE_INFO_TYPE = 140;
int v8dbg_type_Oddball__ODDBALL_TYPE = 131;
int v8dbg_type_OnHeapBasicBlockProfilerData__ON_HEAP_BASIC_BLOCK_PROFILER_DATA_TYPE = 257;
int v8dbg_type_PreparseData__PREPARSE_DATA_TYPE = 258;
int v8dbg_type_PromiseCapability__PROMISE_CAPABILITY_TYPE = 161;
int v8dbg_type_PromiseFulfillReactionJobTask__PROMISE_FULFILL_REACTION_JOB_TASK_TYPE = 132;
int v8dbg_type_PromiseOnStack__PROMISE_ON_STACK_TYPE = 162;
int v8dbg_type_PromiseReaction__PROMISE_REACTION_TYPE = 163;
int v8dbg_type_PromiseRejectReactionJobTask__PROMISE_REJECT_REACTION_JOB_TASK_TYPE = 133;
int v8dbg_type_PromiseResolveThenableJobTask__PROMISE_RESOLVE_THENABLE_JOB_TASK_TYPE = 136;
int v8dbg_type_PropertyArray__PROPERTY_ARRAY_TYPE = 259;
int v8dbg_type_PropertyCell__PROPERTY_CELL_TYPE = 260;
int v8dbg_type_PropertyDescriptorObject__PROPERTY_DESCRIPTOR_OBJECT_TYPE = 164;
int v8dbg_type_PrototypeInfo__PROTOTYPE_INFO_TYPE = 165;
int v8dbg_type_RegExpBoilerplateDescription__REG_EXP_BOILERPLATE_DESCRIPTION_TYPE = 166;
int v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE = 261;
int v8dbg_type_ScriptOrModule__SCRIPT_OR_MODULE_TYPE = 168;
int v8dbg_type_Script__SCRIPT_TYPE = 167;
int v8dbg_type_SeqOneByteString__ONE_BYTE_STRING_TYPE = 40;
int v8dbg_type_SeqTwoByteString__STRING_TYPE = 32;
int v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE = 262;
int v8dbg_type_SlicedString__SLICED_ONE_BYTE_STRING_TYPE = 43;
int v8dbg_type_SlicedString__SLICED_STRING_TYPE = 35;
int v8dbg_type_SloppyArgumentsElements__SLOPPY_ARGUMENTS_ELEMENTS_TYPE = 194;
int v8dbg_type_SmallOrderedHashMap__SMALL_ORDERED_HASH_MAP_TYPE = 231;
int v8dbg_type_SmallOrderedHashSet__SMALL_ORDERED_HASH_SET_TYPE = 232;
int v8dbg_type_SmallOrderedNameDictionary__SMALL_ORDERED_NAME_DICTIONARY_TYPE = 233;
int v8dbg_type_SmiBox__SMI_BOX_TYPE = 263;
int v8dbg_type_SmiPair__SMI_PAIR_TYPE = 264;
int v8dbg_type_SortState__SORT_STATE_TYPE = 265;
int v8dbg_type_SourceTextModuleInfoEntry__SOURCE_TEXT_MODULE_INFO_ENTRY_TYPE = 169;
int v8dbg_type_SourceTextModule__SOURCE_TEXT_MODULE_TYPE = 238;
int v8dbg_type_StackFrameInfo__STACK_FRAME_INFO_TYPE = 170;
int v8dbg_type_StrongDescriptorArray__STRONG_DESCRIPTOR_ARRAY_TYPE = 237;
int v8dbg_type_SwissNameDictionary__SWISS_NAME_DICTIONARY_TYPE = 266;
int v8dbg_type_Symbol__SYMBOL_TYPE = 128;
int v8dbg_type_SyntheticModule__SYNTHETIC_MODULE_TYPE = 239;
int v8dbg_type_TemplateObjectDescription__TEMPLATE_OBJECT_DESCRIPTION_TYPE = 171;
int v8dbg_type_Tuple2__TUPLE2_TYPE = 172;
int v8dbg_type_TurbofanBitsetType__TURBOFAN_BITSET_TYPE_TYPE = 215;
int v8dbg_type_TurbofanHeapConstantType__TURBOFAN_HEAP_CONSTANT_TYPE_TYPE = 216;
int v8dbg_type_TurbofanOtherNumberConstantType__TURBOFAN_OTHER_NUMBER_CONSTANT_TYPE_TYPE = 217;
int v8dbg_type_TurbofanRangeType__TURBOFAN_RANGE_TYPE_TYPE = 218;
int v8dbg_type_TurbofanUnionType__TURBOFAN_UNION_TYPE_TYPE = 219;
int v8dbg_type_TurboshaftFloat64RangeType__TURBOSHAFT_FLOAT64_RANGE_TYPE_TYPE = 196;
int v8dbg_type_TurboshaftFloat64SetType__TURBOSHAFT_FLOAT64_SET_TYPE_TYPE = 197;
int v8dbg_type_TurboshaftWord32RangeType__TURBOSHAFT_WORD32_RANGE_TYPE_TYPE = 199;
int v8dbg_type_TurboshaftWord32SetType__TURBOSHAFT_WORD32_SET_TYPE_TYPE = 200;
int v8dbg_type_TurboshaftWord64RangeType__TURBOSHAFT_WORD64_RANGE_TYPE_TYPE = 202;
int v8dbg_type_TurboshaftWord64SetType__TURBOSHAFT_WORD64_SET_TYPE_TYPE = 203;
int v8dbg_type_UncompiledDataWithPreparseDataAndJob__UNCOMPILED_DATA_WITH_PREPARSE_DATA_AND_JOB_TYPE = 221;
int v8dbg_type_UncompiledDataWithPreparseData__UNCOMPILED_DATA_WITH_PREPARSE_DATA_TYPE = 220;
int v8dbg_type_UncompiledDataWithoutPreparseDataWithJob__UNCOMPILED_DATA_WITHOUT_PREPARSE_DATA_WITH_JOB_TYPE = 223;
int v8dbg_type_UncompiledDataWithoutPreparseData__UNCOMPILED_DATA_WITHOUT_PREPARSE_DATA_TYPE = 222;
int v8dbg_type_WasmApiFunctionRef__WASM_API_FUNCTION_REF_TYPE = 267;
int v8dbg_type_WasmArray__WASM_ARRAY_TYPE = 276;
int v8dbg_type_WasmCapiFunctionData__WASM_CAPI_FUNCTION_DATA_TYPE = 225;
int v8dbg_type_WasmContinuationObject__WASM_CONTINUATION_OBJECT_TYPE = 268;
int v8dbg_type_WasmExceptionTag__WASM_EXCEPTION_TAG_TYPE = 173;
int v8dbg_type_WasmExportedFunctionData__WASM_EXPORTED_FUNCTION_DATA_TYPE = 226;
int v8dbg_type_WasmGlobalObject__WASM_GLOBAL_OBJECT_TYPE = 2153;
int v8dbg_type_WasmIndirectFunctionTable__WASM_INDIRECT_FUNCTION_TABLE_TYPE = 174;
int v8dbg_type_WasmInternalFunction__WASM_INTERNAL_FUNCTION_TYPE = 269;
int v8dbg_type_WasmJSFunctionData__WASM_JS_FUNCTION_DATA_TYPE = 227;
int v8dbg_type_WasmMemoryObject__WASM_MEMORY_OBJECT_TYPE = 2155;
int v8dbg_type_WasmModuleObject__WASM_MODULE_OBJECT_TYPE = 2156;
int v8dbg_type_WasmNull__WASM_NULL_TYPE = 270;
int v8dbg_type_WasmResumeData__WASM_RESUME_DATA_TYPE = 271;
int v8dbg_type_WasmStringViewIter__WASM_STRING_VIEW_ITER_TYPE = 272;
int v8dbg_type_WasmStruct__WASM_STRUCT_TYPE = 277;
int v8dbg_type_WasmSuspenderObject__WASM_SUSPENDER_OBJECT_TYPE = 2157;
int v8dbg_type_WasmTableObject__WASM_TABLE_OBJECT_TYPE = 2158;
int v8dbg_type_WasmTagObject__WASM_TAG_OBJECT_TYPE = 2159;
int v8dbg_type_WasmTypeInfo__WASM_TYPE_INFO_TYPE = 273;
int v8dbg_type_WeakArrayList__WEAK_ARRAY_LIST_TYPE = 274;
int v8dbg_type_WeakCell__WEAK_CELL_TYPE = 275;
int v8dbg_type_WeakFixedArray__WEAK_FIXED_ARRAY_TYPE = 240;

static volatile unsigned long sink;

__attribute__((noinline)) void fake_spin(double secs)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			sink += i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

/*
 * Objects as V8 tags them (address + 1): a "map" whose instance type (at
 * 12) is SharedFunctionInfo's, an "SFI" of that map and nothing else, a
 * "function" whose shared (at 24) is it, a "context".
 */
static uint64_t fake_map[4], fake_sfi[8], fake_fn[8], fake_ctx[4];
uint64_t fake_fn_tagged, fake_ctx_tagged;

/* A loop of %rdi turns in a frame shaped as a JavaScript one, no CFI. */
__asm__(".text\n"
	"\t.globl fake_js_loop\n"
	"\t.type fake_js_loop, @function\n"
	"fake_js_loop:\n"
	"\tpush %rbp\n"
	"\tmov %rsp, %rbp\n"
	"\tpush fake_ctx_tagged(%rip)\n"  /* rbp-8: the context */
	"\tpush fake_fn_tagged(%rip)\n"   /* rbp-16: the function */
	"\tsub $24, %rsp\n"              /* argc, array, offset */
	"1:\tdec %rdi\n"
	"\tjnz 1b\n"
	"\tleave\n"
	"\tret\n"
	"\t.size fake_js_loop, .-fake_js_loop\n");
void fake_js_loop(long n);

static void fake_js(double secs)
{
	struct timespec t0, t;
	uint16_t sfi_type = (uint16_t)v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE;

	memcpy((char *)fake_map + 12, &sfi_type, 2);
	fake_sfi[0] = (uint64_t)(uintptr_t)fake_map + 1;
	fake_fn[3] = (uint64_t)(uintptr_t)fake_sfi + 1;
	fake_fn_tagged = (uint64_t)(uintptr_t)fake_fn + 1;
	fake_ctx_tagged = (uint64_t)(uintptr_t)fake_ctx + 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		fake_js_loop(10000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 3;

	if (argc > 1 && !strcmp(argv[1], "unknown"))
		fake_spin(secs);
	else if (argc > 1 && !strcmp(argv[1], "lying"))
		fake_js(secs);
	else
		return 2;
	return 0;
}
