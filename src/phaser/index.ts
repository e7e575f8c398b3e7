export { BALANCE_SCENE_KEY, RewardBusPlugin, type RewardBusPluginData } from './plugin.js';
export { TOAST_SCENE_KEY, type Toast, type ToastOptions, ToastScene, type ToastVariant } from './toast-scene.js';
