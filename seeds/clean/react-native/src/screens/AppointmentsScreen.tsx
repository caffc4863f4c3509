import AsyncStorage from "@react-native-async-storage/async-storage";
import type { NativeStackScreenProps } from "@react-navigation/native-stack";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { ActivityIndicator, AppState, Pressable, RefreshControl, SectionList, StyleSheet, Text, View } from "react-native";
import { ApiError, Appointment, AuthError, Doctor, getDoctors, listAppointments } from "../api/client";
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
  const date = new Date(iso);
  const month = String(date.getMonth() + 1).padStart(2, "0");
  const day = String(date.getDate()).padStart(2, "0");
  return `${date.getFullYear()}-${month}-${day}`;
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

  const loadPage = useCallback(async (pageToLoad: number, gen: number) => {
    const result = await listAppointments(pageToLoad);
    const doctorIds = [...new Set(result.items.map((a) => a.doctorId))];
    // Doctor names only decorate the rows (they fall back to the location): a failed lookup must not hide the appointments.
    const doctors =
      doctorIds.length > 0
        ? await getDoctors(doctorIds).catch((err: unknown) => {
            if (err instanceof AuthError) throw err;
            return [] as Doctor[];
          })
        : [];
    const doctorsById = new Map(doctors.map((d) => [d.id, d]));
    const newRows = result.items.map((appointment) => ({ appointment, doctor: doctorsById.get(appointment.doctorId) }));
    if (gen !== generation.current) return;
    setRows((previous) => (pageToLoad === 1 ? newRows : [...previous, ...newRows]));
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
    const subscription = AppState.addEventListener("change", (state) => {
      if (state === "active") void refresh();
    });
    return () => subscription.remove();
  }, [refresh]);

  useLayoutEffect(() => {
    navigation.setOptions({
      headerRight: () => (
        <Pressable
          accessibilityRole="button"
          accessibilityLabel="Book an appointment"
          onPress={() => navigation.navigate("BookAppointment")}
          hitSlop={12}
        >
          <Text style={styles.headerIcon}>＋</Text>
        </Pressable>
      ),
    });
  }, [navigation]);

  // BORDERLINE 4 page-number paging over the upcoming list can skip or repeat a row when appointments start or are booked between pages; whether the API pages by a stable cursor is outside this diff
  const loadMore = () => {
    if (loadingMore.current || !hasMore || refreshing || settledGeneration.current !== generation.current) return;
    loadingMore.current = true;
    const gen = generation.current;
    loadPage(page + 1, gen)
      .catch((err: unknown) => {
        if (gen === generation.current) setError(messageFor(err));
      })
      .finally(() => {
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
