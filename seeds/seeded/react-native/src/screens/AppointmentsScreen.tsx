import AsyncStorage from "@react-native-async-storage/async-storage";
import type { NativeStackScreenProps } from "@react-navigation/native-stack";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { ActivityIndicator, AppState, Pressable, RefreshControl, SectionList, StyleSheet, Text, View } from "react-native";
import { ApiError, Appointment, AuthError, Doctor, getDoctor, listAppointments } from "../api/client";
import type { RootStackParamList } from "../navigation/RootNavigator";

type Props = NativeStackScreenProps<RootStackParamList, "Appointments">;

interface Row {
  appointment: Appointment;
  doctor: Doctor | undefined;
}

const BANNER_KEY = "@northwell/checkin-banner-dismissed";

function messageFor(err: unknown): string {
  if (err instanceof AuthError) return "Please sign in again.";
  if (err instanceof ApiError && err.status >= 500) return "Our servers are having trouble. Pull to retry.";
  return "Could not load your appointments. Pull to retry.";
}

function dayKey(iso: string): string {
  // SEED 9 [MAJOR] (core/wrong-timezone) toISOString() is UTC, so evening appointments in the Americas (or morning ones in Asia) are grouped under the wrong day
  return new Date(iso).toISOString().slice(0, 10);
}

function dayTitle(key: string): string {
  const [year, month, day] = key.split("-").map(Number);
  return new Date(year, month - 1, day).toLocaleDateString(undefined, {
    weekday: "long",
    month: "long",
    day: "numeric",
  });
}

export function AppointmentsScreen({ navigation }: Props) {
  const [rows, setRows] = useState<Row[]>([]);
  const [page, setPage] = useState(1);
  const [hasMore, setHasMore] = useState(true);
  const [refreshing, setRefreshing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [bannerDismissed, setBannerDismissed] = useState(true);
  const loadingMore = useRef(false);
  /** Bumped by every refresh (a page-1 load); results of an older generation (a load-more or refresh overtaken by a refresh) are dropped. */
  const generation = useRef(0);
  /** The generation whose refresh has finished; load-more waits while a newer refresh is still running. */
  const settledGeneration = useRef(0);

  const loadPage = useCallback(async (pageToLoad: number, gen: number = generation.current) => {
    const result = await listAppointments(pageToLoad);
    // SEED 6 [MAJOR] (core/n-plus-one) one /doctors request per appointment row although getDoctors batch lookup exists; a 20-row page costs 20 extra round trips on mobile networks
    const doctors = await Promise.all(result.items.map((a) => getDoctor(a.doctorId)));
    const newRows = result.items.map((appointment, i) => ({ appointment, doctor: doctors[i] }));
    if (gen !== generation.current) return;
    // SEED 7 [MAJOR] (core/stale-closure) rows is captured from the first render ([]) because it is not a dependency, so loading page 2 replaces the list instead of appending
    setRows(pageToLoad === 1 ? newRows : [...rows, ...newRows]);
    setPage(pageToLoad);
    setHasMore(pageToLoad < result.totalPages);
  }, []);

  const refresh = useCallback(async () => {
    const gen = ++generation.current;
    setRefreshing(true);
    setError(null);
    try {
      await loadPage(1, gen);
    } catch (err) {
      if (gen === generation.current) setError(messageFor(err));
    } finally {
      // Only the latest refresh ends the refreshing state: an overtaken one finishing first must not let load-more run early.
      if (gen === generation.current) {
        settledGeneration.current = gen;
        setRefreshing(false);
      }
    }
  }, [loadPage]);

  useEffect(() => {
    void refresh();
    AsyncStorage.getItem(BANNER_KEY)
      .then((value) => setBannerDismissed(value === "1"))
      .catch(() => setBannerDismissed(false));
  }, [refresh]);

  useEffect(() => {
    // SEED 8 [MAJOR] (core/memory-leak) AppState subscription is never removed, so every remount adds another listener that refreshes a screen that no longer exists
    AppState.addEventListener("change", (state) => {
      if (state === "active") void refresh();
    });
  }, [refresh]);

  useLayoutEffect(() => {
    navigation.setOptions({
      headerRight: () => (
        // SEED 10 [MINOR] (core/accessibility) icon-only header button has no accessibilityRole or accessibilityLabel, so VoiceOver/TalkBack announce only "plus"
        <Pressable onPress={() => navigation.navigate("BookAppointment")} hitSlop={12}>
          <Text style={styles.headerIcon}>＋</Text>
        </Pressable>
      ),
    });
  }, [navigation]);

  const loadMore = () => {
    if (loadingMore.current || !hasMore || refreshing || settledGeneration.current !== generation.current) return;
    loadingMore.current = true;
    // SEED 11 [MAJOR] (core/unhandled-promise) a failed page load is an unhandled rejection: no error is shown and loadingMore stays true, so pagination silently stops for good
    loadPage(page + 1).then(() => {
      loadingMore.current = false;
    });
  };

  const dismissBanner = () => {
    setBannerDismissed(true);
    AsyncStorage.setItem(BANNER_KEY, "1").catch(() => undefined);
  };

  const sections = useMemo(() => {
    const byDay = new Map<string, Row[]>();
    for (const row of rows) {
      const key = dayKey(row.appointment.startsAt);
      const bucket = byDay.get(key);
      if (bucket) {
        bucket.push(row);
      } else {
        byDay.set(key, [row]);
      }
    }
    return [...byDay.entries()].map(([key, data]) => ({ key, title: dayTitle(key), data }));
  }, [rows]);

  return (
    <View style={styles.container}>
      {!bannerDismissed && (
        <View style={styles.banner}>
          <Text style={styles.bannerText}>You can now check in from your phone up to 30 minutes before your visit.</Text>
          <Pressable accessibilityRole="button" accessibilityLabel="Dismiss" onPress={dismissBanner}>
            <Text style={styles.bannerClose}>✕</Text>
          </Pressable>
        </View>
      )}
      {error && <Text style={styles.error} accessibilityRole="alert">{error}</Text>}
      <SectionList
        sections={sections}
        keyExtractor={(row) => row.appointment.id}
        renderSectionHeader={({ section }) => <Text style={styles.sectionHeader}>{section.title}</Text>}
        renderItem={({ item }) => (
          <Pressable
            accessibilityRole="button"
            style={styles.row}
            onPress={() => navigation.navigate("AppointmentDetails", { appointmentId: item.appointment.id })}
          >
            <Text style={styles.time}>
              {new Date(item.appointment.startsAt).toLocaleTimeString(undefined, { hour: "numeric", minute: "2-digit" })}
            </Text>
            <View style={styles.rowBody}>
              <Text style={styles.title}>{item.appointment.title}</Text>
              <Text style={styles.subtitle}>{item.doctor ? `${item.doctor.name} · ${item.doctor.specialty}` : item.appointment.location}</Text>
            </View>
          </Pressable>
        )}
        onEndReached={loadMore}
        onEndReachedThreshold={0.5}
        refreshControl={<RefreshControl refreshing={refreshing} onRefresh={refresh} />}
        ListEmptyComponent={refreshing || error ? null : <Text style={styles.empty}>No upcoming appointments.</Text>}
        ListFooterComponent={hasMore && rows.length > 0 ? <ActivityIndicator style={styles.footer} /> : null}
      />
    </View>
  );
}

const styles = StyleSheet.create({
  container: { flex: 1, backgroundColor: "#fff" },
  banner: { flexDirection: "row", alignItems: "center", padding: 12, backgroundColor: "#e8f1fb" },
  bannerText: { flex: 1, color: "#123" },
  bannerClose: { fontSize: 18, paddingHorizontal: 8 },
  error: { color: "#b00020", padding: 12 },
  sectionHeader: { fontWeight: "600", paddingHorizontal: 16, paddingTop: 16, paddingBottom: 4, backgroundColor: "#fff" },
  row: { flexDirection: "row", paddingHorizontal: 16, paddingVertical: 12, borderBottomWidth: StyleSheet.hairlineWidth, borderColor: "#ddd" },
  time: { width: 72, fontVariant: ["tabular-nums"], color: "#333" },
  rowBody: { flex: 1 },
  title: { fontSize: 16, color: "#111" },
  subtitle: { color: "#666", marginTop: 2 },
  empty: { textAlign: "center", marginTop: 48, color: "#666" },
  footer: { marginVertical: 16 },
  headerIcon: { fontSize: 24, color: "#0a66c2" },
});
