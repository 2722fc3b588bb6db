// Where a task's files live in the blob store, written in one place:
//   tasks/<task_id>/<name>          outputs (what the pipeline wrote)
//   tasks/<task_id>/inputs/<name>   inputs stored by the job APIs
// and how a task's input refers to a stored input: "blob:tasks/<task_id>/inputs/<name>".

const TASK_ID = /^[0-9a-f]{32}$/;
const NAME = /^[\w.-]+$/;

export const BLOB_REF_PREFIX = 'blob:';
/** A stored-input reference as task input may hold it. */
export const STORED_INPUT_REF = /^blob:tasks\/[0-9a-f]{32}\/inputs\/[\w.-]+$/;

export const isTaskId = (s: string): boolean => TASK_ID.test(s);
/** Folder of everything a task stored (removed whole at retention or on a failed create). */
export const taskPrefix = (taskId: string): string => `tasks/${taskId}`;
export const taskOutputKey = (taskId: string, name: string): string => `${taskPrefix(taskId)}/${name}`;
export const taskInputKey = (taskId: string, name: string): string => `${taskPrefix(taskId)}/inputs/${name}`;
export const storedInputRef = (taskId: string, name: string): string => `${BLOB_REF_PREFIX}${taskInputKey(taskId, name)}`;

/** The blob key of a "blob:" reference when it names a stored input of `taskId`, else null. */
export function storedInputKey(ref: string, taskId: string): string | null {
  if (!STORED_INPUT_REF.test(ref)) return null;
  const key = ref.slice(BLOB_REF_PREFIX.length);
  return key.startsWith(`${taskPrefix(taskId)}/inputs/`) && NAME.test(key.split('/').pop()!) ? key : null;
}
